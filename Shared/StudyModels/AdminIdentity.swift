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

/// Who an admin bearer token belongs to, as study-metadata tells the other services
/// (`POST /internal/v1/admin-sessions/verify` with the token's SHA-256, never the token).
public struct AdminIdentity: Codable, Sendable, Equatable {
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
}
