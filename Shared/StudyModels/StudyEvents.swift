import Foundation

/// A study's state as the other services need it. Sent on every lifecycle action, and listed for
/// a resync; receivers keep the highest `version` they have seen (deliveries may repeat or cross).
public struct StudyEvent: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        case preLaunch = "pre_launch"
        case upcoming, testing, active, paused, deactivated
    }

    public struct ActivityVersion: Codable, Sendable, Equatable {
        public var activityId: String
        /// Integer version; the apps see it as the label "1.(version-1)".
        public var version: Int
        public var label: String
        /// `questionnaire` or `task`.
        public var type: String

        public init(activityId: String, version: Int, label: String, type: String) {
            self.activityId = activityId
            self.version = version
            self.label = label
            self.type = type
        }
    }

    public var studyId: String
    public var appId: String
    public var orgId: String
    public var status: Status
    /// The newest frozen version (0 before the first publish).
    public var version: Int
    public var label: String
    public var consentVersion: Int
    public var activities: [ActivityVersion]
    public var participantProperties: [ParticipantProperty]
    /// The lifecycle action that caused the event (`publish`, `launch`, ...), absent in a resync list.
    public var action: String?
    public var at: Date
    /// The arms the response service assigns participants to, and the protocol a schema study's
    /// data POSTs are read against (the newest version's).
    public var arms: StudyArms?
    public var source: StudySource?

    public init(
        studyId: String, appId: String, orgId: String, status: Status, version: Int, label: String, consentVersion: Int,
        activities: [ActivityVersion], participantProperties: [ParticipantProperty], action: String?, at: Date,
        arms: StudyArms? = nil, source: StudySource? = nil
    ) {
        self.studyId = studyId
        self.appId = appId
        self.orgId = orgId
        self.status = status
        self.version = version
        self.label = label
        self.consentVersion = consentVersion
        self.activities = activities
        self.participantProperties = participantProperties
        self.action = action
        self.at = at
        self.arms = arms
        self.source = source
    }
}

/// Reply of `GET /internal/v1/studies`.
public struct StudyEventList: Codable, Sendable, Equatable {
    public var studies: [StudyEvent]

    public init(studies: [StudyEvent]) { self.studies = studies }
}

/// Notifications handed to the registration service for push delivery.
public struct NotificationBatch: Codable, Sendable, Equatable {
    public var notifications: [NotificationMessage]

    public init(notifications: [NotificationMessage]) { self.notifications = notifications }
}

/// One notification to push: to every user of the app (`studyId` absent) or to a study's
/// participants. `id` is unique across all notifications, so a repeated delivery is recognised.
public struct NotificationMessage: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case gateway = "Gateway"
        case study = "Study"
    }

    public var id: Int64
    public var notificationId: String
    public var appId: String
    public var orgId: String
    public var studyId: String?
    public var type: Kind
    /// `Announcement`, `Activity`, `Resource`, `Study` or `studyEvent` (what the apps switch on).
    public var subtype: String
    public var title: LocalizedText
    public var message: LocalizedText
    public var activityId: String?
    public var resourceId: String?
    public var sentAt: Date

    public init(
        id: Int64, notificationId: String, appId: String, orgId: String, studyId: String?, type: Kind, subtype: String,
        title: LocalizedText, message: LocalizedText, activityId: String?, resourceId: String?, sentAt: Date
    ) {
        self.id = id
        self.notificationId = notificationId
        self.appId = appId
        self.orgId = orgId
        self.studyId = studyId
        self.type = type
        self.subtype = subtype
        self.title = title
        self.message = message
        self.activityId = activityId
        self.resourceId = resourceId
        self.sentAt = sentAt
    }
}

/// Reply of `GET /internal/v1/studies/{id}/standing`: which app a published study belongs to and
/// its status, for a service that must check a study id a participant sent.
public struct StudyStanding: Codable, Sendable, Equatable {
    public var studyId: String
    public var appId: String
    public var status: StudyEvent.Status
    /// The newest published version's name, in the study's default language.
    public var name: String?
    /// The consent versions (as the apps name them) a participant's signature satisfies: since
    /// the newest version that asked those who signed to sign again; nil when none ever did.
    public var consentVersionsInForce: [String]?

    public init(
        studyId: String, appId: String, status: StudyEvent.Status, name: String? = nil, consentVersionsInForce: [String]? = nil
    ) {
        self.studyId = studyId
        self.appId = appId
        self.status = status
        self.name = name
        self.consentVersionsInForce = consentVersionsInForce
    }
}

/// What a published study schedules, at its newest version: study-metadata's answer to
/// registration, which expands it into each participant's runs (docs/schedules.md). Dates are
/// ISO 8601.
public struct StudySchedule: Codable, Sendable, Equatable {
    public var studyId: String
    public var version: Int
    /// The study's IANA zone: the zone of its absolute dates, and a participant's when nothing
    /// else is known of them.
    public var timeZone: String
    public var launchedAt: Date?
    /// The activities the MyStudies apps are served (a Sage-only assessment is not), without
    /// their steps: a schedule is when runs open and close, not what they ask.
    public var activities: [StudyActivity]

    public init(studyId: String, version: Int, timeZone: String, launchedAt: Date?, activities: [StudyActivity]) {
        self.studyId = studyId
        self.version = version
        self.timeZone = timeZone
        self.launchedAt = launchedAt
        self.activities = activities
    }
}

/// The responses the response service stored, in the order of their ids, for registration's run
/// states: which participant, activity and run each was for, when it arrived, and when and at
/// which offset the app says it was finished (docs/schedules.md, What arrived). Registration reads
/// it a page at a time from where it last stopped. Dates are ISO 8601.
public struct SubmissionFeed: Codable, Sendable, Equatable {
    public struct Submission: Codable, Sendable, Equatable {
        /// The response service's id of the response: ascending in the order they were stored.
        public var responseId: Int64
        public var studyId: String
        /// SHA-256 (hex) of the participant id the participant's app holds: how registration
        /// knows them.
        public var participantTokenSHA256: String
        public var activityId: String
        /// The run the app named (`activityRunId`), as it sent it.
        public var runId: String?
        public var receivedAt: Date
        /// When the app says the participant finished (the response's `endTime`), when it sent
        /// one that reads and is not after the response arrived, and the offset east of UTC
        /// (minutes) it was written with.
        public var finishedAt: Date?
        public var offsetMinutes: Int?
        /// The response's answers to date questions (in forms too), by question key: the date as
        /// the participant gave it (`yyyy-MM-dd`). What anchored schedules count from.
        public var dateAnswers: [String: String]?

        /// The most date answers a submission carries, and the longest key.
        public static let maxDateAnswers = 20
        public static let maxKeyLength = 100

        public init(
            responseId: Int64, studyId: String, participantTokenSHA256: String, activityId: String, runId: String?,
            receivedAt: Date, finishedAt: Date?, offsetMinutes: Int?, dateAnswers: [String: String]? = nil
        ) {
            self.responseId = responseId
            self.studyId = studyId
            self.participantTokenSHA256 = participantTokenSHA256
            self.activityId = activityId
            self.runId = runId
            self.receivedAt = receivedAt
            self.finishedAt = finishedAt
            self.offsetMinutes = offsetMinutes
            self.dateAnswers = dateAnswers
        }

        private enum CodingKeys: String, CodingKey {
            case responseId, studyId, participantTokenSHA256, activityId, runId, receivedAt, finishedAt, offsetMinutes, dateAnswers
        }

        /// The instants keep their fraction of a second: a response stored in the second its
        /// participant enrolled is theirs only if it is after the instant they did.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            responseId = try c.decode(Int64.self, forKey: .responseId)
            studyId = try c.decode(String.self, forKey: .studyId)
            participantTokenSHA256 = try c.decode(String.self, forKey: .participantTokenSHA256)
            activityId = try c.decode(String.self, forKey: .activityId)
            runId = try c.decodeIfPresent(String.self, forKey: .runId)
            receivedAt = try PreciseInstants.decode(c, .receivedAt)
            finishedAt = try PreciseInstants.decodeIfPresent(c, .finishedAt)
            offsetMinutes = try c.decodeIfPresent(Int.self, forKey: .offsetMinutes)
            dateAnswers = try c.decodeIfPresent([String: String].self, forKey: .dateAnswers)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(responseId, forKey: .responseId)
            try c.encode(studyId, forKey: .studyId)
            try c.encode(participantTokenSHA256, forKey: .participantTokenSHA256)
            try c.encode(activityId, forKey: .activityId)
            try c.encodeIfPresent(runId, forKey: .runId)
            try PreciseInstants.encode(receivedAt, &c, .receivedAt)
            try PreciseInstants.encode(finishedAt, &c, .finishedAt)
            try c.encodeIfPresent(offsetMinutes, forKey: .offsetMinutes)
            try c.encodeIfPresent(dateAnswers, forKey: .dateAnswers)
        }
    }

    /// The page's responses from participants who enrolled through a MyStudies app (the others
    /// have no app token for registration to know them by), in id order.
    public var submissions: [Submission]
    /// Where the next page starts (`after`): every response up to this id was stored at least
    /// `settleSeconds` before the page was read. A response's id is taken when its transaction
    /// starts and is seen when it commits, so a younger one may still be joined by a smaller id;
    /// the reader reads them again next time rather than step past one.
    public var settledThrough: Int64

    /// The most responses one page reads.
    public static let pageSize = 1_000
    /// How long after a response's transaction began no response of a smaller id can still appear.
    public static let settleSeconds = 60

    public init(submissions: [Submission], settledThrough: Int64) {
        self.submissions = submissions
        self.settledThrough = settledThrough
    }
}

/// Study-metadata's word to the registration service that a study's test run ended (it launched,
/// or testing ended): what was recorded for the study up to `endedAt` was testers' and goes.
public struct StudyTestingEnded: Codable, Sendable, Equatable {
    public var studyId: String
    public var endedAt: Date

    public init(studyId: String, endedAt: Date) {
        self.studyId = studyId
        self.endedAt = endedAt
    }

    private enum CodingKeys: String, CodingKey { case studyId, endedAt }

    /// `endedAt` keeps its fraction of a second: the line between testers' rows and real ones is
    /// that instant, and whole seconds would move it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        studyId = try container.decode(String.self, forKey: .studyId)
        endedAt = try PreciseInstants.decode(container, .endedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(studyId, forKey: .studyId)
        try PreciseInstants.encode(endedAt, &container, .endedAt)
    }
}

/// Instants that keep their fraction of a second on the wire between services (the encoders'
/// ISO 8601 drops it): where a line is drawn at an instant, whole seconds would move it.
public enum PreciseInstants {
    private static let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public static func decode<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Date {
        let text = try container.decode(String.self, forKey: key)
        guard let date = try? format.parse(text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an ISO 8601 instant")
        }
        return date
    }

    public static func decodeIfPresent<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key) throws -> Date? {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return nil }
        return try decode(container, key)
    }

    public static func encode<Key: CodingKey>(_ date: Date?, _ container: inout KeyedEncodingContainer<Key>, _ key: Key) throws {
        guard let date else { return }
        try container.encode(date.formatted(format), forKey: key)
    }

    /// Whole milliseconds since 1970 (as `Int64`), `date` taken to the one it falls in (`down`)
    /// or the first at or after it (`up`), within half a microsecond: a stored microsecond a
    /// double holds just beside a millisecond is that millisecond.
    public static func milliseconds(_ date: Date, up: Bool) -> Int64 {
        let scaled = date.timeIntervalSince1970 * 1000
        return Int64(up ? (scaled - 0.0005).rounded(.up) : (scaled + 0.0005).rounded(.down))
    }

    /// The instant of a whole millisecond, half a microsecond past it: PostgreSQL's driver
    /// truncates a date to its microsecond, which then is exactly the millisecond's first.
    public static func instant(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: (Double(milliseconds) + 0.0005) / 1000)
    }
}

/// What became of the responses that failed processing (`InternalPaths.settlementFeed`): each
/// response that failed, and each that failed before and was settled again (stored once the team
/// reprocessed it, or failed again), in the order they were settled. Registration keeps the
/// latest of each, so a run whose answers could not be stored is never shown as completed.
public struct SettlementFeed: Codable, Sendable, Equatable {
    public struct Settlement: Codable, Sendable, Equatable {
        /// The response service's id of the response (as in `SubmissionFeed`).
        public var responseId: Int64
        /// Its place in the feed: a later number is a later settling of the same response.
        public var number: Int64
        /// Whether its answers are in the study's tables now (false: failed, or waiting to be
        /// processed again after failing).
        public var stored: Bool

        public init(responseId: Int64, number: Int64, stored: Bool) {
            self.responseId = responseId
            self.number = number
            self.stored = stored
        }
    }

    public var settlements: [Settlement]
    /// Where the next page starts (`after`): every settlement up to this number was made at least
    /// `SubmissionFeed.settleSeconds` before the page was read (a number is taken inside its
    /// transaction, so a smaller one may still commit for a while).
    public var settledThrough: Int64

    /// The most settlements one page reads.
    public static let pageSize = 1_000

    public init(settlements: [Settlement], settledThrough: Int64) {
        self.settlements = settlements
        self.settledThrough = settledThrough
    }
}

/// Every published version of a study, oldest first, for the FHIR API's `ResearchStudy` history
/// and its `Questionnaire` per activity version (docs/fhir.md): what each version was called, when
/// it was published, and the version of each activity it held.
public struct StudyVersionHistory: Codable, Sendable, Equatable {
    public struct Version: Codable, Sendable, Equatable {
        public var version: Int
        /// How the apps see the study version ("1.0", "1.1", ...).
        public var label: String
        public var publishedAt: Date
        /// The study's name at this version, in its default language.
        public var name: String?
        public var activities: [StudyEvent.ActivityVersion]

        public init(version: Int, label: String, publishedAt: Date, name: String?, activities: [StudyEvent.ActivityVersion]) {
            self.version = version
            self.label = label
            self.publishedAt = publishedAt
            self.name = name
            self.activities = activities
        }
    }

    public var studyId: String
    public var versions: [Version]

    public init(studyId: String, versions: [Version]) {
        self.studyId = studyId
        self.versions = versions
    }
}
