/// A whole study as one JSON document: what `PUT /admin/v1/studies/{studyId}/draft` takes and
/// `GET` returns, so a research team can keep a study in git and script it with curl.
///
/// Participant-facing texts are `LocalizedText` (a string, or `{"en": ..., "es": ...}`).
/// Activities hold their steps in exactly the shape the apps read, so designs from the original
/// servers paste in unchanged. `docs/study-document.md` describes every field.
public struct StudyDocument: Codable, Sendable, Equatable {
    public var studyId: String
    /// The app the study belongs to.
    public var appId: String
    public var name: LocalizedText
    public var category: LocalizedText?
    public var sponsor: LocalizedText?
    public var tagline: LocalizedText?
    public var description: LocalizedText?
    public var website: String?
    /// URL of the study's logo.
    public var logo: String?
    /// The carousel pages of the study overview; the first may be a video.
    public var overview: [OverviewPage]
    public var platforms: [Platform]
    public var enrolling: Bool
    public var rejoin: Rejoin
    public var withdrawal: Withdrawal
    /// IANA time zone in which schedules are computed (DST-correct).
    public var timeZone: String
    /// Languages the study offers; `en` is required and is the fallback.
    public var languages: [String]
    public var eligibility: Eligibility
    public var consent: Consent
    public var activities: [StudyActivity]
    public var participantProperties: [ParticipantProperty]
    public var resources: [StudyResource]
    public var notifications: [StudyNotification]
    public var dashboard: Dashboard
    /// The arms the server assigns participants to; absent for a study without arms.
    public var arms: StudyArms?
    /// The document the study was imported from, when its own app reads it (a schema protocol).
    public var source: StudySource?
    /// The study version the apps see, when the admin gives one: a study moved from another
    /// deployment keeps the version its participants' apps hold (`2.3`). Absent, versions are
    /// numbered (`1.0`, `1.1`, ...). Publishing a change under a label an earlier version had
    /// continues its sequence (`2.4`), so the apps always see a new version.
    public var versionLabel: String?
    /// The study's descriptive name (as its protocol has it), beside the short `name` the apps
    /// list: WCP's "descriptive study name". Kept for the team; the apps are not served it.
    public var fullName: LocalizedText?
    /// The address participants write to about the study (WCP's "support email").
    public var supportEmail: String?
    /// How long a participant takes part, as the team estimates it (WCP's "estimated duration").
    public var estimatedDuration: StudyDuration?
    /// The organisations the study's data is shared with (WCP's "data partner").
    public var dataPartners: [String]?

    public init(
        studyId: String, appId: String, name: LocalizedText, overview: [OverviewPage] = [],
        platforms: [Platform] = [.ios, .android], enrolling: Bool = true, rejoin: Rejoin = Rejoin(),
        withdrawal: Withdrawal = Withdrawal(), timeZone: String = "UTC", languages: [String] = ["en"],
        eligibility: Eligibility = Eligibility(type: .token), consent: Consent = Consent(),
        activities: [StudyActivity] = [], participantProperties: [ParticipantProperty] = [],
        resources: [StudyResource] = [], notifications: [StudyNotification] = [], dashboard: Dashboard = Dashboard()
    ) {
        self.studyId = studyId
        self.appId = appId
        self.name = name
        self.overview = overview
        self.platforms = platforms
        self.enrolling = enrolling
        self.rejoin = rejoin
        self.withdrawal = withdrawal
        self.timeZone = timeZone
        self.languages = languages
        self.eligibility = eligibility
        self.consent = consent
        self.activities = activities
        self.participantProperties = participantProperties
        self.resources = resources
        self.notifications = notifications
        self.dashboard = dashboard
    }

    enum CodingKeys: String, CodingKey {
        case studyId, appId, name, category, sponsor, tagline, description, website, logo, overview, platforms
        case enrolling, rejoin, withdrawal, timeZone, languages, eligibility, consent, activities
        case participantProperties, resources, notifications, dashboard, arms, source, versionLabel
        case fullName, supportEmail, estimatedDuration, dataPartners
    }

    /// Lists may be left out of a document; everything else named here is required.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        studyId = try c.decode(String.self, forKey: .studyId)
        appId = try c.decode(String.self, forKey: .appId)
        name = try c.decode(LocalizedText.self, forKey: .name)
        category = try c.decodeIfPresent(LocalizedText.self, forKey: .category)
        sponsor = try c.decodeIfPresent(LocalizedText.self, forKey: .sponsor)
        tagline = try c.decodeIfPresent(LocalizedText.self, forKey: .tagline)
        description = try c.decodeIfPresent(LocalizedText.self, forKey: .description)
        website = try c.decodeIfPresent(String.self, forKey: .website)
        logo = try c.decodeIfPresent(String.self, forKey: .logo)
        overview = try c.decodeIfPresent([OverviewPage].self, forKey: .overview) ?? []
        platforms = try c.decodeIfPresent([Platform].self, forKey: .platforms) ?? [.ios, .android]
        enrolling = try c.decodeIfPresent(Bool.self, forKey: .enrolling) ?? true
        rejoin = try c.decodeIfPresent(Rejoin.self, forKey: .rejoin) ?? Rejoin()
        withdrawal = try c.decodeIfPresent(Withdrawal.self, forKey: .withdrawal) ?? Withdrawal()
        timeZone = try c.decode(String.self, forKey: .timeZone)
        languages = try c.decodeIfPresent([String].self, forKey: .languages) ?? ["en"]
        eligibility = try c.decode(Eligibility.self, forKey: .eligibility)
        consent = try c.decode(Consent.self, forKey: .consent)
        activities = try c.decodeIfPresent([StudyActivity].self, forKey: .activities) ?? []
        participantProperties = try c.decodeIfPresent([ParticipantProperty].self, forKey: .participantProperties) ?? []
        resources = try c.decodeIfPresent([StudyResource].self, forKey: .resources) ?? []
        notifications = try c.decodeIfPresent([StudyNotification].self, forKey: .notifications) ?? []
        dashboard = try c.decodeIfPresent(Dashboard.self, forKey: .dashboard) ?? Dashboard()
        arms = try c.decodeIfPresent(StudyArms.self, forKey: .arms)
        source = try c.decodeIfPresent(StudySource.self, forKey: .source)
        versionLabel = try c.decodeIfPresent(String.self, forKey: .versionLabel)
        fullName = try c.decodeIfPresent(LocalizedText.self, forKey: .fullName)
        supportEmail = try c.decodeIfPresent(String.self, forKey: .supportEmail)
        estimatedDuration = try c.decodeIfPresent(StudyDuration.self, forKey: .estimatedDuration)
        dataPartners = try c.decodeIfPresent([String].self, forKey: .dataPartners)
    }
}

/// A length of time in whole weeks, months or years.
public struct StudyDuration: Codable, Sendable, Equatable {
    public enum Unit: String, Codable, Sendable, CaseIterable {
        case weeks, months, years
    }

    public var value: Int
    public var unit: Unit

    public init(value: Int, unit: Unit) {
        self.value = value
        self.unit = unit
    }

    enum CodingKeys: String, CodingKey {
        case value, unit
    }

    /// The unit may be left out: weeks, as WCP's form starts.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        value = try c.decode(Int.self, forKey: .value)
        unit = try c.decodeIfPresent(Unit.self, forKey: .unit) ?? .weeks
    }

    /// Long enough for any study, short enough to be a typo when it is more.
    public static let values = 1...999
}

/// The mobile platforms a study is offered on; the app's Basic credential tells which one asks.
public enum Platform: String, Codable, Sendable, CaseIterable {
    case ios, android
}

/// One page of the study overview carousel.
public struct OverviewPage: Codable, Sendable, Equatable {
    public var title: LocalizedText
    public var text: LocalizedText
    /// URL of the page's image.
    public var image: String?
    /// URL of a video; only the first page may have one.
    public var videoUrl: String?

    public init(title: LocalizedText, text: LocalizedText, image: String? = nil, videoUrl: String? = nil) {
        self.title = title
        self.text = text
        self.image = image
        self.videoUrl = videoUrl
    }
}

/// Whether a participant who withdrew may join again.
public struct Rejoin: Codable, Sendable, Equatable {
    public var allowed: Bool
    public var message: LocalizedText?

    public init(allowed: Bool = true, message: LocalizedText? = nil) {
        self.allowed = allowed
        self.message = message
    }
}

/// What happens to a participant's data when they withdraw.
public struct Withdrawal: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        /// Keep the data.
        case noAction = "no_action"
        /// Delete the data.
        case deleteData = "delete_data"
        /// Ask the participant.
        case askUser = "ask_user"
    }

    public var type: Kind
    public var message: LocalizedText?

    public init(type: Kind = .noAction, message: LocalizedText? = nil) {
        self.type = type
        self.message = message
    }
}
