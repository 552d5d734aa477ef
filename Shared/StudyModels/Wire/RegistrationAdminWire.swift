import Foundation

/// `GET /admin/v1/studies/{studyId}/participants` on the registration service: the app users who
/// joined a study, a page at a time.
public struct ParticipantList: Codable, Sendable, Equatable {
    public struct Participant: Codable, Sendable, Equatable {
        /// The participant's id in this study: random, different in each study, and neither the
        /// account's id nor the response service's token.
        public var participantId: String
        /// Only for a study admin (or a super-admin); reading it is audited.
        public var email: String?
        /// As the apps report it: `yetToJoin`, `inProgress`, `completed`, `notEligible`,
        /// `Withdrawn`.
        public var status: String
        public var enrolledAt: Date?
        public var withdrawnAt: Date?
        /// The consent versions signed, oldest first.
        public var consentVersions: [String]
        /// The data-sharing choice of the newest signed consent (empty when not asked).
        public var sharing: String?
        /// When the app last reported an activity's state.
        public var lastActivityAt: Date?
        /// The study's completion and adherence, in percent, as the app reports them.
        public var completion: Int
        public var adherence: Int

        public init(
            participantId: String, email: String?, status: String, enrolledAt: Date?, withdrawnAt: Date?,
            consentVersions: [String], sharing: String?, lastActivityAt: Date?, completion: Int, adherence: Int
        ) {
            self.participantId = participantId
            self.email = email
            self.status = status
            self.enrolledAt = enrolledAt
            self.withdrawnAt = withdrawnAt
            self.consentVersions = consentVersions
            self.sharing = sharing
            self.lastActivityAt = lastActivityAt
            self.completion = completion
            self.adherence = adherence
        }
    }

    public var participants: [Participant]
    /// The `after` of the next page; absent on the last page.
    public var next: String?
    /// Whether e-mail addresses are shown (the caller may see identities).
    public var identities: Bool

    public init(participants: [Participant], next: String?, identities: Bool) {
        self.participants = participants
        self.next = next
        self.identities = identities
    }

    /// The statuses a participant can have in a study.
    public static let statuses = ["yetToJoin", "inProgress", "completed", "notEligible", "Withdrawn"]
}
