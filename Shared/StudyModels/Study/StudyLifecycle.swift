/// The states of a study and the admin actions between them (docs/admin-api.md, the study
/// lifecycle). study-metadata enforces them; the console reads them to offer only the actions
/// the study's status allows.
public enum StudyStatus: String, Codable, Sendable {
    /// Being built; nothing is served.
    case preLaunch = "pre_launch"
    /// Listed as "Upcoming"; no activities served.
    case upcoming
    /// Published for testing: served only to the app's testing credential, joined only with a
    /// tester's token; everything recorded is removed when the study launches or testing ends.
    case testing
    case active
    case paused
    /// Listed as "Closed"; terminal.
    case deactivated

    /// The status the apps read in `studyList`.
    public var wireName: String? {
        switch self {
        case .preLaunch: nil
        case .upcoming: "Upcoming"
        // The test build of the app sees the study as the live one will.
        case .testing, .active: "Active"
        case .paused: "Paused"
        case .deactivated: "Closed"
        }
    }
}

public enum LifecycleAction: String, Sendable, CaseIterable {
    case publish
    case unpublish
    case publishForTesting = "publish-for-testing"
    case endTesting = "end-testing"
    case launch
    case publishUpdates = "publish-updates"
    case pause
    case resume
    case deactivate

    /// Whether the action freezes the draft into a new version (when it changed).
    public var freezesDraft: Bool { [.publish, .publishForTesting, .launch, .publishUpdates].contains(self) }

    /// Whether the action ends a test run, so what testers recorded is removed.
    public func endsTesting(from status: StudyStatus) -> Bool { status == .testing && self != .publishUpdates }

    /// The status after the action from `status`, or nil when the action is not allowed there.
    public func next(from status: StudyStatus) -> StudyStatus? {
        switch (self, status) {
        case (.publish, .preLaunch): .upcoming
        case (.unpublish, .upcoming): .preLaunch
        case (.publishForTesting, .preLaunch): .testing
        case (.endTesting, .testing): .preLaunch
        case (.launch, .preLaunch), (.launch, .upcoming), (.launch, .testing): .active
        case (.publishUpdates, .testing): .testing
        case (.publishUpdates, .active): .active
        case (.publishUpdates, .paused): .paused
        case (.pause, .active): .paused
        case (.resume, .paused): .active
        case (.deactivate, .upcoming), (.deactivate, .active), (.deactivate, .paused): .deactivated
        default: nil
        }
    }
}

/// Which parts of a study changed between two versions; this drives the version counters and
/// what `studyUpdates` tells the apps to refetch.
public struct StudyChanges: Codable, Sendable, Equatable {
    public var consent: Bool
    public var activities: Bool
    public var resources: Bool
    /// Anything else: listing, overview, eligibility, settings, notifications, dashboard.
    public var info: Bool
    /// The team's choice on publishing a consent change to a study with participants (WCP's
    /// "enforce e-consent flow again for enrolled participants"): those who signed an earlier
    /// version sign this one at their app's next launch. Never true without `consent`.
    public var reconsent: Bool

    public init(consent: Bool, activities: Bool, resources: Bool, info: Bool, reconsent: Bool = false) {
        self.consent = consent
        self.activities = activities
        self.resources = resources
        self.info = info
        self.reconsent = consent && reconsent
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            consent: try container.decode(Bool.self, forKey: .consent),
            activities: try container.decode(Bool.self, forKey: .activities),
            resources: try container.decode(Bool.self, forKey: .resources),
            info: try container.decode(Bool.self, forKey: .info),
            // Versions frozen before the choice existed asked nobody to sign again.
            reconsent: try container.decodeIfPresent(Bool.self, forKey: .reconsent) ?? false)
    }

    public var any: Bool { consent || activities || resources || info }
}
