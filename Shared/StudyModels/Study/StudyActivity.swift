import JSONText

/// An activity of a study: its identity, schedule and steps (in the shape the apps read).
public struct StudyActivity: Codable, Sendable, Equatable {
    /// The activity id the apps see: unique within the study, immutable once launched.
    public var activityId: String
    public var title: LocalizedText
    /// `questionnaire` or `task`; inferred from the steps when absent.
    public var type: ActivityDesign.Kind?
    /// Whether the steps branch (the apps show a progress bar only without branching).
    public var branching: Bool
    public var schedule: Schedule
    public var steps: [ActivityStep]
    /// The version string the apps see for this design, when the admin gives one: a study moved
    /// from another deployment keeps the versions its responses carry (`3`, `2.1`). Absent, the
    /// version is numbered (`1.0`, `1.1`, ...). Changing it alone makes a new version.
    public var versionLabel: String?
    /// The arm whose participants do this activity (one of the study's `arms`); absent: everyone.
    public var arm: String?
    /// The Sage assessment the activity was imported from (docs/sage.md); absent for the rest.
    public var assessment: SageAssessment?
    /// Push a reminder when a run is due and not done (docs/schedules.md, Reminders); absent: none.
    public var reminder: ActivityReminder?
    /// True while the schedule is the placeholder an import gave this new activity (a design or
    /// a Sage assessment imported on its own), not one the team chose: the console's check-list
    /// asks for a schedule, and saving the activity's page (where the schedule is shown) clears
    /// it. Absent: the schedule was chosen. Never served to the apps, and no change of version.
    public var placeholderSchedule: Bool?

    public init(
        activityId: String, title: LocalizedText, type: ActivityDesign.Kind? = nil, branching: Bool = false,
        schedule: Schedule, steps: [ActivityStep], versionLabel: String? = nil, arm: String? = nil
    ) {
        self.activityId = activityId
        self.title = title
        self.type = type
        self.branching = branching
        self.schedule = schedule
        self.steps = steps
        self.versionLabel = versionLabel
        self.arm = arm
    }

    enum CodingKeys: String, CodingKey {
        case activityId, title, type, branching, schedule, steps, versionLabel, arm, assessment, reminder, placeholderSchedule
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        activityId = try c.decode(String.self, forKey: .activityId)
        title = try c.decode(LocalizedText.self, forKey: .title)
        type = try c.decodeIfPresent(ActivityDesign.Kind.self, forKey: .type)
        branching = try c.decodeIfPresent(Bool.self, forKey: .branching) ?? false
        schedule = try c.decode(Schedule.self, forKey: .schedule)
        steps = try c.decode([ActivityStep].self, forKey: .steps)
        versionLabel = try c.decodeIfPresent(String.self, forKey: .versionLabel)
        arm = try c.decodeIfPresent(String.self, forKey: .arm)
        assessment = try c.decodeIfPresent(SageAssessment.self, forKey: .assessment)
        reminder = try c.decodeIfPresent(ActivityReminder.self, forKey: .reminder)
        placeholderSchedule = try c.decodeIfPresent(Bool.self, forKey: .placeholderSchedule)
    }

    /// Every version number a study, its consent or an activity can reach: one a minute for a
    /// year is half a million publications, so a number past this comes from outside, never from
    /// a study (docs/security.md, Numbers from outside).
    public static let versionNumbers = 1...1_000_000

    /// What a version label may be: what the original servers' versions looked like. A label in
    /// the numbered form (`7`, `1.6`) must name a number a version can have, so that no label
    /// anywhere (a draft, an app's request, a response) carries a number past `versionNumbers`.
    public static func isValidVersionLabel(_ label: String) -> Bool {
        let scalars = label.unicodeScalars
        guard (1...32).contains(scalars.count),
            scalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) })
        else { return false }
        let parts = label.split(separator: ".", omittingEmptySubsequences: false)
        let isNumber = { (part: Substring) in !part.isEmpty && part.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
        if parts.count == 1, isNumber(parts[0]) { return WholeNumber.parse(parts[0], in: 0...versionNumbers.upperBound) != nil }
        if parts.count == 2, parts[0] == "1", isNumber(parts[1]) {
            return WholeNumber.parse(parts[1], in: 0...versionNumbers.upperBound - 1) != nil
        }
        return true
    }

    /// What `isValidVersionLabel` accepts, in a coordinator's words.
    public static let versionLabelRule =
        "1 to 32 letters, digits, dots, hyphens or underscores, like 3 or 2.1 (a number at most 1000000)"

    /// `questionnaire` unless it says otherwise or its steps are active tasks.
    public var kind: ActivityDesign.Kind {
        type ?? (steps.contains { $0.type == .task } ? .task : .questionnaire)
    }

    /// The question with `key` (inside the form `formKey` when given).
    public func question(key: String, formKey: String? = nil) -> ActivityStep? {
        if let formKey {
            return steps.first { $0.key == formKey && $0.type == .form }?.steps?.first { $0.key == key }
        }
        return steps.first { $0.key == key }
    }
}

/// A Sage assessment an activity was made from: the document as imported (what Sage's clients
/// read back), and why the MyStudies apps cannot run the activity, if they cannot.
public struct SageAssessment: Codable, Sendable, Equatable {
    public var document: JSONValue
    /// Empty when the MyStudies apps can run the activity; otherwise each reason, located in the
    /// assessment, and the activity is served to Sage's clients only.
    public var sageOnly: [ValidationProblem]

    public init(document: JSONValue, sageOnly: [ValidationProblem]) {
        self.document = document
        self.sageOnly = sageOnly
    }

    public var isSageOnly: Bool { !sageOnly.isEmpty }
}

/// When an activity is available: a frequency, either at absolute dates in the study's time zone
/// or relative to an anchor date.
///
/// Dates are `yyyy-MM-dd`, times `HH:mm` (or `HH:mm:ss`), date-times `yyyy-MM-ddTHH:mm`, all local
/// to the study's time zone; the server adds the offset when it serves them.
public struct Schedule: Codable, Sendable, Equatable {
    public enum Frequency: String, Codable, Sendable, CaseIterable {
        case oneTime, daily, weekly, monthly, manual, ongoing

        /// The frequency name the apps read.
        public var wireName: String {
            switch self {
            case .oneTime: "One time"
            case .daily: "Daily"
            case .weekly: "Weekly"
            case .monthly: "Monthly"
            case .manual: "Manually Schedule"
            case .ongoing: "Ongoing"
            }
        }
    }

    public var frequency: Frequency
    /// Absent: absolute dates (`Regular`). Present: relative to the anchor (`AnchorDate`).
    public var anchor: Anchor?

    // Absolute schedules.
    public var startDate: String?
    public var endDate: String?
    /// Time of day of a one-time, weekly or monthly run.
    public var time: String?
    /// One time: starts when the study launches.
    public var launchWithStudy: Bool?
    /// One time: no end date (available for the study's lifetime).
    public var studyLifetime: Bool?
    /// Daily: the start of each window; each lasts until the next starts, the last until 23:59:59.
    public var dailyTimes: [String]?
    /// Weekly/monthly: how many weeks or months it repeats.
    public var repeatCount: Int?
    /// Weekly: 1 (Sunday) to 7 (Saturday); absolute schedules use the start date's weekday.
    public var dayOfWeek: Int?
    /// Monthly, anchor-relative: day of the month.
    public var dateOfMonth: Int?
    /// Manual: explicit runs.
    public var runs: [ScheduledRun]?

    // Anchor-relative schedules.
    /// Days after (negative: before) the anchor the activity opens.
    public var startDays: Int?
    /// Days after the anchor the activity closes.
    public var endDays: Int?
    /// Manual, anchor-relative: runs by days from the anchor.
    public var anchorRuns: [AnchorRun]?
    /// Runs added to the schedule after launch reach existing participants.
    public var addNewRuns: Bool?

    // What the schema app adds to a daily schedule (the MyStudies apps do not read these).
    /// Each run's time moves by a random whole number of minutes in [-jitter, jitter).
    public var jitterMinutes: Int?
    /// Only the first run is offered, and it stays until done, under `stickyLabel`.
    public var sticky: Bool?
    public var stickyLabel: String?
    /// A run is offered for this long after its time (the schema app counts milliseconds).
    public var expiresAfterMilliseconds: Int?
    /// Runs are offered only once each of these activities has a completed run.
    public var unlockAfter: [String]?

    public init(frequency: Frequency, anchor: Anchor? = nil) {
        self.frequency = frequency
        self.anchor = anchor
    }
}

/// The date an anchor-relative schedule counts from.
public struct Anchor: Codable, Sendable, Equatable {
    public enum Source: String, Codable, Sendable {
        case enrollmentDate
        /// The answer to a date question.
        case activityResponse
        case participantProperty

        /// The `sourceType` the apps read.
        public var wireName: String {
            switch self {
            case .enrollmentDate: "EnrollmentDate"
            case .activityResponse: "ActivityResponse"
            case .participantProperty: "ParticipantProperty"
            }
        }
    }

    public var source: Source
    /// `activityResponse`: the activity and question (and form) holding the date.
    public var activityId: String?
    public var key: String?
    public var formKey: String?
    /// `participantProperty`: the property's key.
    public var propertyKey: String?

    public init(
        source: Source, activityId: String? = nil, key: String? = nil, formKey: String? = nil, propertyKey: String? = nil
    ) {
        self.source = source
        self.activityId = activityId
        self.key = key
        self.formKey = formKey
        self.propertyKey = propertyKey
    }
}

/// One explicit run of a manually scheduled activity (local date-times).
public struct ScheduledRun: Codable, Sendable, Equatable {
    public var start: String
    public var end: String

    public init(start: String, end: String) {
        self.start = start
        self.end = end
    }
}

/// One run of a manually scheduled, anchor-relative activity.
public struct AnchorRun: Codable, Sendable, Equatable {
    public var startDays: Int
    public var endDays: Int
    public var time: String?

    public init(startDays: Int, endDays: Int, time: String? = nil) {
        self.startDays = startDays
        self.endDays = endDays
        self.time = time
    }
}
