import Foundation
import StudyModels

/// The admin a request is authenticated as, with their per-study roles.
public struct AuthenticatedAdmin: Sendable, AdminRoleHolder {
    public let id: UUID
    public let email: String
    public let role: AdminRole
    public let studyRoles: [String: StudyRole]
    /// The hash of the bearer token used, so logout can revoke exactly this session.
    package let tokenHash: String

    package init(id: UUID, email: String, role: AdminRole, studyRoles: [String: StudyRole], tokenHash: String) {
        self.id = id
        self.email = email
        self.role = role
        self.studyRoles = studyRoles
        self.tokenHash = tokenHash
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
