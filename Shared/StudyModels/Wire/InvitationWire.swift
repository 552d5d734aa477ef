import Foundation

/// Registration → response: `POST /internal/v1/studies/{studyId}/invitation-tokens`. One enrollment
/// token per invitation, made (or, for an invitation that has one, renewed with the new expiry)
/// by the response service, which checks enrollments against it. Idempotent per invitation id.
public struct InvitationTokenRequest: Codable, Sendable, Equatable {
    public struct Invitation: Codable, Sendable, Equatable {
        public var invitationId: UUID
        public var expiresAt: Date
        /// Participant properties by property id, as text: checked against the study's
        /// published properties and kept with the token (`validateEnrollmentToken` returns them).
        public var properties: [String: String]

        public init(invitationId: UUID, expiresAt: Date, properties: [String: String] = [:]) {
            self.invitationId = invitationId
            self.expiresAt = expiresAt
            self.properties = properties
        }
    }

    public var invitations: [Invitation]
    /// The admin who invited, for the response service's audit log.
    public var createdBy: String

    public init(invitations: [Invitation], createdBy: String) {
        self.invitations = invitations
        self.createdBy = createdBy
    }

    /// Most invitations one request (or one revocation) names.
    public static let maxInvitations = 10_000

    /// 1 to `maxInvitations` invitations, each named once.
    public var isWellFormed: Bool {
        (1...Self.maxInvitations).contains(invitations.count)
            && Set(invitations.map(\.invitationId)).count == invitations.count
    }
}

/// The answer: each invitation's token, or (422) what is wrong, by the invitation's index in the
/// request; then no token is kept.
public struct InvitationTokenReply: Codable, Sendable, Equatable {
    public struct Issued: Codable, Sendable, Equatable {
        public var invitationId: UUID
        public var token: String

        public init(invitationId: UUID, token: String) {
            self.invitationId = invitationId
            self.token = token
        }
    }

    public struct Problem: Codable, Sendable, Equatable {
        /// 0-based, into the request's `invitations`.
        public var index: Int
        public var field: String
        public var message: String

        public init(index: Int, field: String, message: String) {
            self.index = index
            self.field = field
            self.message = message
        }
    }

    public var tokens: [Issued]
    public var problems: [Problem]

    public init(tokens: [Issued], problems: [Problem]) {
        self.tokens = tokens
        self.problems = problems
    }
}

/// Registration → response: `POST /internal/v1/studies/{studyId}/invitation-tokens/revoke`.
public struct InvitationRevocation: Codable, Sendable, Equatable {
    public var invitationIds: [UUID]

    public init(invitationIds: [UUID]) { self.invitationIds = invitationIds }

    /// 1 to `InvitationTokenRequest.maxInvitations` ids.
    public var isWellFormed: Bool { (1...InvitationTokenRequest.maxInvitations).contains(invitationIds.count) }
}

/// Which tokens are now refused, and which a participant had already spent (not revoked).
public struct InvitationRevocationReply: Codable, Sendable, Equatable {
    public var revoked: [UUID]
    public var used: [UUID]

    public init(revoked: [UUID], used: [UUID]) {
        self.revoked = revoked
        self.used = used
    }
}

/// Response → registration, through the response service's outbox: an invitation's token was
/// spent by an enrollment. `participantTokenHash` is the SHA-256 (hex) of the participant id the
/// enrollment gave the app, which the app then reports to registration (`updateStudyState`), so
/// registration can tell which account joined with the invitation without ever seeing the token.
public struct InvitationEnrollment: Codable, Sendable, Equatable {
    public var studyId: String
    public var invitationId: UUID
    public var participantTokenHash: String
    public var enrolledAt: Date

    public init(studyId: String, invitationId: UUID, participantTokenHash: String, enrolledAt: Date) {
        self.studyId = studyId
        self.invitationId = invitationId
        self.participantTokenHash = participantTokenHash
        self.enrolledAt = enrolledAt
    }

    public var isWellFormed: Bool { TokenHash.isHexDigest(participantTokenHash) }
}
