import Foundation

/// An admin account's app-wide role.
public enum AdminRole: String, Codable, Sendable {
    /// Everything, on every study: invites admins, grants roles, reads the audit log.
    case superAdmin = "super_admin"
    /// Only what per-study roles grant.
    case admin
}

/// What an admin may do on one study. Each role includes the ones below it.
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

/// The admin a request is authenticated as, with their per-study roles.
public struct AuthenticatedAdmin: Sendable {
    public let id: UUID
    public let email: String
    public let role: AdminRole
    public let studyRoles: [String: StudyRole]
    /// The hash of the bearer token used, so logout can revoke exactly this session.
    let tokenHash: String

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
