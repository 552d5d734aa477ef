import Foundation

/// The reply of `POST /admin/v1/apps/{appId}/move-in/participants`: what moving one part of an
/// export's participants in does (a dry run) or did. `studystack-import participants` sends an
/// export in parts and adds their reports up (`adding`).
public struct ParticipantMoveInReport: Codable, Sendable, Equatable {
    public var source: String
    public var readAt: String
    public var dryRun: Bool
    public var counts: Counts
    public var findings: [MoveInFinding]

    public init(source: String, readAt: String, dryRun: Bool, counts: Counts, findings: [MoveInFinding]) {
        self.source = source
        self.readAt = readAt
        self.dryRun = dryRun
        self.counts = counts
        self.findings = findings
    }

    public struct Counts: Codable, Sendable, Equatable {
        /// Accounts in the part read.
        public var accounts = 0
        /// Not here yet: the import creates them (a dry run) or created them.
        public var new = 0
        /// Moved in by an earlier run: nothing changes.
        public var alreadyImported = 0
        /// An account of the same e-mail address is here and did not come from the source: left as it is.
        public var taken = 0
        /// Not importable (the findings say why).
        public var notImported = 0
        /// Of the new ones: whose password is checked at the next sign-in, and who get a
        /// temporary password by e-mail at their first sign-in instead.
        public var passwordsCarried = 0
        public var passwordResets = 0
        /// Of the new ones: accounts deleted at the source, kept for their records.
        public var disabled = 0
        public var studyStates = 0
        public var enrolments = 0
        public var withdrawals = 0
        public var signatures = 0
        public var signedPDFs = 0
        public var activityStates = 0
        /// Sites and invitations: in a dry run, those read for the studies here; in an import,
        /// those written (none when a run finds them here already).
        public var sites = 0
        public var invitations = 0
        /// Of the invitations, those whose token keeps working here.
        public var openInvitations = 0

        public init() {}

        public static func + (lhs: Counts, rhs: Counts) -> Counts {
            var sum = Counts()
            sum.accounts = lhs.accounts + rhs.accounts
            sum.new = lhs.new + rhs.new
            sum.alreadyImported = lhs.alreadyImported + rhs.alreadyImported
            sum.taken = lhs.taken + rhs.taken
            sum.notImported = lhs.notImported + rhs.notImported
            sum.passwordsCarried = lhs.passwordsCarried + rhs.passwordsCarried
            sum.passwordResets = lhs.passwordResets + rhs.passwordResets
            sum.disabled = lhs.disabled + rhs.disabled
            sum.studyStates = lhs.studyStates + rhs.studyStates
            sum.enrolments = lhs.enrolments + rhs.enrolments
            sum.withdrawals = lhs.withdrawals + rhs.withdrawals
            sum.signatures = lhs.signatures + rhs.signatures
            sum.signedPDFs = lhs.signedPDFs + rhs.signedPDFs
            sum.activityStates = lhs.activityStates + rhs.activityStates
            sum.sites = lhs.sites + rhs.sites
            sum.invitations = lhs.invitations + rhs.invitations
            sum.openInvitations = lhs.openInvitations + rhs.openInvitations
            return sum
        }

        /// The counts in sentences, as the command and the console print them.
        public func sentences(dryRun: Bool) -> [String] {
            let verb = dryRun ? "will be created" : "created"
            let n = Self.counted
            return [
                "\(n(accounts, "account")) read: \(new) \(verb), \(alreadyImported) already imported, \(taken) left (an account of that e-mail is here), \(notImported) not imported",
                "of the new: \(passwordsCarried) keep their password, \(passwordResets) get a temporary one at their first sign-in, \(disabled) deleted at the source (kept, cannot sign in)",
                "\(n(studyStates, "study state")) (\(enrolments) enrolled, \(withdrawals) withdrawn), \(n(signatures, "consent signature")) (\(signedPDFs) with their PDF), \(n(activityStates, "activity state"))",
                "\(n(sites, "site")) and \(n(invitations, "invitation")) \(dryRun ? "to move in" : "moved in") (\(openInvitations) still open, their tokens working here)",
            ]
        }

        /// "1 site", "2 sites".
        static func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
    }

    /// This report and `other`'s, as one.
    public func adding(_ other: ParticipantMoveInReport) -> ParticipantMoveInReport {
        ParticipantMoveInReport(source: source, readAt: readAt, dryRun: dryRun, counts: counts + other.counts, findings: findings + other.findings)
    }
}

/// Registration → response: `POST /internal/v1/studies/{studyId}/moved-participants`. Participants
/// enrolled at a MyStudies deployment, each by the SHA-256 (hex) of the participant id their app
/// holds, so the app's next response is taken as theirs. Registration never sends the id itself.
public struct MovedParticipants: Codable, Sendable, Equatable {
    public struct Participant: Codable, Sendable, Equatable {
        public var tokenHash: String
        /// `enrolled` or `withdrawn`.
        public var status: String
        /// `true`, `false` or `NA`, as the response service keeps data sharing.
        public var allowDataSharing: String
        public var enrolledAt: Date
        public var withdrawnAt: Date?

        public init(tokenHash: String, status: String, allowDataSharing: String, enrolledAt: Date, withdrawnAt: Date?) {
            self.tokenHash = tokenHash
            self.status = status
            self.allowDataSharing = allowDataSharing
            self.enrolledAt = enrolledAt
            self.withdrawnAt = withdrawnAt
        }
    }

    public static let maxParticipants = 1000

    public var participants: [Participant]
    /// Who moved them in, for the audit log.
    public var movedBy: String

    public init(participants: [Participant], movedBy: String) {
        self.participants = participants
        self.movedBy = movedBy
    }

    /// 1 to `maxParticipants`, each a distinct lowercase SHA-256 with a status and sharing this
    /// service writes.
    public var isWellFormed: Bool {
        guard (1...Self.maxParticipants).contains(participants.count), !movedBy.isEmpty, movedBy.utf8.count <= 320 else { return false }
        let hashes = Set(participants.map(\.tokenHash))
        return hashes.count == participants.count && participants.allSatisfy { participant in
            participant.tokenHash.utf8.count == 64
                && participant.tokenHash.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
                && ["enrolled", "withdrawn"].contains(participant.status) && ["true", "false", "NA"].contains(participant.allowDataSharing)
                && (participant.status == "withdrawn") == (participant.withdrawnAt != nil)
        }
    }
}

/// How many of the participants were new to the response service, and how many it had already.
public struct MovedParticipantsReply: Codable, Sendable, Equatable {
    public var created: Int
    public var existing: Int

    public init(created: Int, existing: Int) {
        self.created = created
        self.existing = existing
    }
}

/// Registration → response: `POST /internal/v1/studies/{studyId}/moved-invitation-tokens`.
/// Invitations moved in from a MyStudies deployment with the tokens their e-mails hold, so an open
/// one still enrols its participant here; one spent at the source is spent by the moved
/// participant (by the hash of their participant id), one disabled there is refused here. An
/// invitation already here is left as it is.
public struct MovedInvitationTokens: Codable, Sendable, Equatable {
    public struct Invitation: Codable, Sendable, Equatable {
        public var invitationId: UUID
        /// Upper-case letters and digits, as the participant types it (the source's are 8 letters
        /// and digits, without this platform's check letter).
        public var token: String
        public var expiresAt: Date
        /// The SHA-256 (hex) of the participant id of the enrolment that spent it.
        public var usedBy: String?
        public var usedAt: Date?
        public var revokedAt: Date?

        public init(invitationId: UUID, token: String, expiresAt: Date, usedBy: String? = nil, usedAt: Date? = nil, revokedAt: Date? = nil) {
            self.invitationId = invitationId
            self.token = token
            self.expiresAt = expiresAt
            self.usedBy = usedBy
            self.usedAt = usedAt
            self.revokedAt = revokedAt
        }
    }

    public static let maxInvitations = 1000

    public var invitations: [Invitation]
    public var movedBy: String

    public init(invitations: [Invitation], movedBy: String) {
        self.invitations = invitations
        self.movedBy = movedBy
    }

    public var isWellFormed: Bool {
        guard (1...Self.maxInvitations).contains(invitations.count), !movedBy.isEmpty, movedBy.utf8.count <= 320,
            Set(invitations.map(\.invitationId)).count == invitations.count, Set(invitations.map(\.token)).count == invitations.count
        else { return false }
        return invitations.allSatisfy { invitation in
            (4...32).contains(invitation.token.utf8.count)
                && invitation.token.utf8.allSatisfy { (65...90).contains($0) || (48...57).contains($0) }
                && (invitation.usedBy.map { $0.utf8.count == 64 && $0.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) } } ?? true)
        }
    }
}

/// The body of `POST /admin/v1/studies/{studyId}/move-in/responses`: one part of what
/// `studystack-import responses read` read.
public struct MovedResponsesPart: Codable, Sendable, Equatable {
    public static let maxResponses = 1000

    /// Where they were read from, for the audit log and the report.
    public var source: String
    public var responses: [MyStudiesStoredResponse]

    public init(source: String, responses: [MyStudiesStoredResponse]) {
        self.source = source
        self.responses = responses
    }
}

/// The reply: what moving one part of a study's stored responses in does (a dry run) or did.
public struct ResponseMoveInReport: Codable, Sendable, Equatable {
    public struct Counts: Codable, Sendable, Equatable {
        public var read = 0
        /// Stored here now (an import), or to be (a dry run).
        public var new = 0
        public var alreadyImported = 0
        /// Their participant is not here: move the participants in first.
        public var unknownParticipant = 0
        /// Not a response that can be read back (the findings say why).
        public var notImported = 0

        public init() {}

        public static func + (lhs: Counts, rhs: Counts) -> Counts {
            var sum = Counts()
            sum.read = lhs.read + rhs.read
            sum.new = lhs.new + rhs.new
            sum.alreadyImported = lhs.alreadyImported + rhs.alreadyImported
            sum.unknownParticipant = lhs.unknownParticipant + rhs.unknownParticipant
            sum.notImported = lhs.notImported + rhs.notImported
            return sum
        }

        public func sentence(dryRun: Bool) -> String {
            "\(read) stored responses read: \(new) \(dryRun ? "will be stored" : "stored"), \(alreadyImported) already imported, "
                + "\(unknownParticipant) of participants not here, \(notImported) not imported"
        }
    }

    public var source: String
    public var dryRun: Bool
    public var counts: Counts
    public var findings: [MoveInFinding]

    public init(source: String, dryRun: Bool, counts: Counts, findings: [MoveInFinding]) {
        self.source = source
        self.dryRun = dryRun
        self.counts = counts
        self.findings = findings
    }

    public func adding(_ other: ResponseMoveInReport) -> ResponseMoveInReport {
        ResponseMoveInReport(source: source, dryRun: dryRun, counts: counts + other.counts, findings: findings + other.findings)
    }
}
