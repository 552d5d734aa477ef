import Foundation

/// An admin account's app-wide role.
public enum AdminRole: String, Codable, Sendable {
    /// Everything, on every study: invites admins, grants roles, reads the audit log.
    case superAdmin = "super_admin"
    /// Only what per-study roles grant.
    case admin
}

/// What an admin may do on one study. Each role includes the ones below it. Roles are granted in
/// study-metadata and hold in every service (the response service asks study-metadata who a
/// bearer token belongs to).
public enum StudyRole: String, Codable, Sendable, CaseIterable, Comparable {
    /// Reads the study and its versions.
    case viewer
    /// Also edits the draft.
    case editor
    /// Also publishes, launches, pauses, resumes, deactivates, and grants roles on the study.
    case studyAdmin = "study_admin"

    private var rank: Int {
        switch self {
        case .viewer: 0
        case .editor: 1
        case .studyAdmin: 2
        }
    }

    public static func < (lhs: StudyRole, rhs: StudyRole) -> Bool { lhs.rank < rhs.rank }
}

/// An admin a request was authenticated as, whichever service checked the token: what an
/// endpoint's access (`AdminAccess`) is checked against.
public protocol AdminRoleHolder: Sendable {
    var role: AdminRole { get }
    /// Whether the admin holds at least `needed` on `studyId`.
    func may(_ needed: StudyRole, on studyId: String) -> Bool
}

/// Who an admin bearer token belongs to, as study-metadata tells the other services
/// (`POST /internal/v1/admin-sessions/verify` with the token's SHA-256, never the token).
public struct AdminIdentity: Codable, Sendable, Equatable, AdminRoleHolder {
    public var adminId: UUID
    public var email: String
    public var role: AdminRole
    public var studyRoles: [String: StudyRole]

    public init(adminId: UUID, email: String, role: AdminRole, studyRoles: [String: StudyRole]) {
        self.adminId = adminId
        self.email = email
        self.role = role
        self.studyRoles = studyRoles
    }

    /// The admin's role on `studyId`: super-admins hold every role.
    public func role(on studyId: String) -> StudyRole? {
        role == .superAdmin ? .studyAdmin : studyRoles[studyId]
    }

    /// Whether the admin holds at least `needed` on `studyId`.
    public func may(_ needed: StudyRole, on studyId: String) -> Bool {
        guard let held = role(on: studyId) else { return false }
        return held >= needed
    }
}

/// The body of `POST /internal/v1/admin-sessions/verify`.
public struct AdminSessionQuery: Codable, Sendable, Equatable {
    /// SHA-256 (hex) of the bearer token, the form study-metadata stores.
    public var tokenHash: String

    public init(tokenHash: String) { self.tokenHash = tokenHash }

    public var isWellFormed: Bool { TokenHash.isHexDigest(tokenHash) }
}

/// An API key's request: a name the admin knows it by, and how long it lives
/// (`POST /admin/v1/api-keys`).
public struct APIKeyRequest: Codable, Sendable, Equatable {
    public var name: String
    /// 1 to 365; 90 when absent.
    public var expiresInDays: Int?

    public init(name: String, expiresInDays: Int? = nil) {
        self.name = name
        self.expiresInDays = expiresInDays
    }
}

/// A new API key: the secret is in this reply only (study-metadata keeps its SHA-256).
public struct APIKeyCreated: Codable, Sendable, Equatable {
    public var id: UUID
    public var key: String
    public var expiresAt: Date

    public init(id: UUID, key: String, expiresAt: Date) {
        self.id = id
        self.key = key
        self.expiresAt = expiresAt
    }
}

/// One of an admin's API keys as listed: never the secret.
public struct APIKeySummary: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var createdAt: Date
    public var expiresAt: Date
    public var lastUsedAt: Date?
    public var revokedAt: Date?

    public init(id: UUID, name: String, createdAt: Date, expiresAt: Date, lastUsedAt: Date?, revokedAt: Date?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }
}

/// `GET /admin/v1/api-keys`: the signed-in admin's own keys, newest first.
public struct APIKeyList: Codable, Sendable, Equatable {
    public var keys: [APIKeySummary]

    public init(keys: [APIKeySummary]) { self.keys = keys }
}

/// The response service asks study-metadata whose an API key is (`InternalCalls.apiKeys`),
/// sending its SHA-256, never the key.
public struct APIKeyQuery: Codable, Sendable, Equatable {
    /// SHA-256 (hex) of the key.
    public var keyHash: String

    public init(keyHash: String) { self.keyHash = keyHash }

    public var isWellFormed: Bool { TokenHash.isHexDigest(keyHash) }
}
