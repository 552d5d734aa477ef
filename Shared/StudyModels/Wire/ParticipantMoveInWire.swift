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
            return sum
        }

        /// The counts in sentences, as the command and the console print them.
        public func sentences(dryRun: Bool) -> [String] {
            let verb = dryRun ? "will be created" : "created"
            return [
                "\(accounts) accounts read: \(new) \(verb), \(alreadyImported) already imported, \(taken) left (an account of that e-mail is here), \(notImported) not imported",
                "of the new: \(passwordsCarried) keep their password, \(passwordResets) get a temporary one at their first sign-in, \(disabled) deleted at the source (kept, cannot sign in)",
                "\(studyStates) study states (\(enrolments) enrolled, \(withdrawals) withdrawn), \(signatures) consent signatures (\(signedPDFs) with their PDF), \(activityStates) activity states",
            ]
        }
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
