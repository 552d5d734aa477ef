import Foundation
import ServiceKit
import StudyModels

/// Who administers what: super-admins invite admins, and a study's admins grant and revoke
/// roles on it. Each change records its audit event; refusals are `StudyMetadataError`s.
package struct AdminTeams: Sendable {
    package let store: any AdminAccounts
    package let audit: any AuditTrail
    package let settings: AdminSettings

    package init(store: any AdminAccounts, audit: any AuditTrail, settings: AdminSettings) {
        self.store = store
        self.audit = audit
        self.settings = settings
    }

    /// A new admin account without a password, and the invitation whose token sets it; the
    /// token is answered this once and stored hashed.
    package func invite(email: String, role: AdminRole, by actor: String, now: Date = Date()) async throws -> AdminInvited {
        guard EmailAddress.isPlausible(email) else { throw StudyMetadataError.notAnEmailAddress }
        guard let id = try await store.createAdmin(email: email, role: role, passwordHash: nil) else {
            throw StudyMetadataError.adminExists
        }
        let token = SecureToken.generate()
        let expiresAt = now.addingTimeInterval(TimeInterval(settings.invitationDuration.components.seconds))
        try await store.createInvitation(adminId: id, tokenHash: SecureToken.hash(token), expiresAt: expiresAt)
        try await audit.record(actor: actor, action: "admin.invited", details: ["email": email, "role": role.rawValue])
        return AdminInvited(id: id, email: email, role: role, invitation: .init(token: token, expiresAt: expiresAt))
    }

    /// Gives the admin `adminId`, or the admin whose e-mail is `email` (a study admin knows
    /// colleagues by their e-mail), `role` on the study.
    @discardableResult
    package func grant(_ role: StudyRole, on studyId: String, to admin: Grantee, by actor: String) async throws -> UUID {
        let adminId: UUID
        switch admin {
        case .id(let id):
            guard try await store.exists(adminId: id) else { throw StudyMetadataError.noAdmin(id.uuidString) }
            adminId = id
        case .email(let email):
            guard let id = try await store.adminId(email: email) else { throw StudyMetadataError.noAdminWithEmail(email) }
            adminId = id
        }
        guard try await store.grant(adminId: adminId, studyId: studyId, role: role) else { throw StudyMetadataError.noStudy(studyId) }
        try await audit.record(
            actor: actor, action: "study.role_granted", studyId: studyId,
            details: ["adminId": adminId.uuidString, "role": role.rawValue])
        return adminId
    }

    package enum Grantee: Sendable {
        case id(UUID)
        case email(String)
    }

    package func revoke(adminId: UUID, on studyId: String, by actor: String) async throws {
        guard try await store.revoke(adminId: adminId, studyId: studyId) else {
            throw StudyMetadataError.noRole(adminId: adminId.uuidString, studyId: studyId)
        }
        try await audit.record(actor: actor, action: "study.role_revoked", studyId: studyId, details: ["adminId": adminId.uuidString])
    }
}
