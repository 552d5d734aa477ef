import Foundation

/// `PUT /admin/v1/studies/{studyId}/imports/schema`: what a schema protocol became.
public struct SchemaImportResult: Codable, Sendable, Equatable {
    public var studyId: String
    public var created: Bool
    /// The activity each module became, in the protocol's order.
    public var activities: [String]
    public var arms: StudyArms?
    /// What works, but not as the protocol's author may think (located in the protocol); then
    /// what the draft still lacks (located in the draft).
    public var warnings: [ValidationProblem]

    public init(studyId: String, created: Bool, activities: [String], arms: StudyArms?, warnings: [ValidationProblem]) {
        self.studyId = studyId
        self.created = created
        self.activities = activities
        self.arms = arms
        self.warnings = warnings
    }
}

/// `GET /admin/v1/studies/{studyId}/schema`: where the schema app finds a study, for its QR code.
public struct SchemaStudyInfo: Codable, Sendable, Equatable {
    public var studyId: String
    /// What the app downloads (`GET` or `POST`); the QR code says this.
    public var protocolURL: String
    /// Where the served protocol tells the app to post its data.
    public var postURL: String
    /// Whether the protocol is served now (the study is launched and enrolling).
    public var served: Bool
    /// The draft's protocol `study_id`, the arms and the activities of its modules.
    public var protocolStudyId: String?
    public var arms: StudyArms?
    public var activities: [String]

    public init(
        studyId: String, protocolURL: String, postURL: String, served: Bool, protocolStudyId: String?, arms: StudyArms?,
        activities: [String]
    ) {
        self.studyId = studyId
        self.protocolURL = protocolURL
        self.postURL = postURL
        self.served = served
        self.protocolStudyId = protocolStudyId
        self.arms = arms
        self.activities = activities
    }
}

/// One participant of a schema study, as the response service knows them.
public struct SchemaParticipant: Codable, Sendable, Equatable {
    public var participantId: Int64
    /// The id the schema app made on the phone (`user_id`).
    public var externalId: String
    public var arm: String?
    /// Their place in the study's order of arrival, which block randomisation counts in.
    public var armOrdinal: Int?
    public var status: String
    public var enrolledAt: Date
    /// Survey responses and page events stored from them.
    public var submissions: Int

    public init(
        participantId: Int64, externalId: String, arm: String?, armOrdinal: Int?, status: String, enrolledAt: Date,
        submissions: Int
    ) {
        self.participantId = participantId
        self.externalId = externalId
        self.arm = arm
        self.armOrdinal = armOrdinal
        self.status = status
        self.enrolledAt = enrolledAt
        self.submissions = submissions
    }
}

/// `GET /admin/v1/studies/{studyId}/schema-participants`: how many each arm has, and a page of
/// participants in order of arrival (`after` the last one's ordinal for the next page).
public struct SchemaParticipantList: Codable, Sendable, Equatable {
    public struct ArmCount: Codable, Sendable, Equatable {
        public var arm: String
        public var participants: Int

        public init(arm: String, participants: Int) {
            self.arm = arm
            self.participants = participants
        }
    }

    public var arms: [ArmCount]
    public var participants: [SchemaParticipant]
    /// The `after` of the next page; absent on the last.
    public var next: Int64?

    public init(arms: [ArmCount], participants: [SchemaParticipant], next: Int64?) {
        self.arms = arms
        self.participants = participants
        self.next = next
    }
}
