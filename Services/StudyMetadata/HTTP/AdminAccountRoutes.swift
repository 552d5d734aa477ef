import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// Super-admins invite admins; super-admins and study admins grant per-study roles; super-admins
/// read the audit log, and study admins their study's part of it.
package struct AdminAccountRoutes {
    package struct GrantRequest: Decodable {
        package var role: StudyRole
    }

    package struct Granted: ResponseEncodable {
        package var adminId: UUID
        package var studyId: String
        package var role: StudyRole
    }

    package let store: AdminStore
    package let authenticator: AdminTokenAuthenticator
    package let audit: AuditLog
    package let settings: AdminSettings

    package init(store: AdminStore, authenticator: AdminTokenAuthenticator, audit: AuditLog, settings: AdminSettings) {
        self.store = store
        self.authenticator = authenticator
        self.audit = audit
        self.settings = settings
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/admins", use: invite)
        router.get("/admin/v1/admins", use: list)
        router.put("/admin/v1/studies/:studyId/roles/:adminId", use: grant)
        router.delete("/admin/v1/studies/:studyId/roles/:adminId", use: revoke)
        router.get("/admin/v1/studies/:studyId/team", use: team)
        router.put("/admin/v1/studies/:studyId/team", use: grantByEmail)
        router.get("/admin/v1/audit", use: auditEvents)
    }

    @Sendable package func invite(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<AdminInvited> {
        let admin = try await authenticator.requireSuperAdmin(request)
        let body = try await JSONBody.decode(AdminInvite.self, from: request, context: context)
        guard EmailAddress.isPlausible(body.email) else { throw APIError.badRequest("not an e-mail address", field: "email") }
        let role = body.role ?? .admin
        guard let id = try await store.createAdmin(email: body.email, role: role, passwordHash: nil) else {
            throw APIError.conflict("an admin with this e-mail already exists")
        }
        let token = SecureToken.generate()
        let expiresAt = Date().addingTimeInterval(TimeInterval(settings.invitationDuration.components.seconds))
        try await store.createInvitation(adminId: id, tokenHash: SecureToken.hash(token), expiresAt: expiresAt)
        try await audit.record(actor: admin.email, action: "admin.invited", details: ["email": body.email, "role": role.rawValue])
        return EditedResponse(
            status: .created,
            response: AdminInvited(id: id, email: body.email, role: role, invitation: .init(token: token, expiresAt: expiresAt)))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> AdminAccountList {
        _ = try await authenticator.requireSuperAdmin(request)
        return AdminAccountList(admins: try await store.list())
    }

    /// Who holds a role on the study: what its study admins manage.
    @Sendable package func team(_ request: Request, context: ServiceRequestContext) async throws -> StudyTeam {
        let studyId = try context.parameters.require("studyId")
        _ = try await authenticator.require(.studyAdmin, on: studyId, request)
        return StudyTeam(members: try await store.team(studyId: studyId))
    }

    /// A role for the admin with an e-mail: a study admin knows colleagues by their e-mail, not
    /// by their account id. (A study admin learns from a 404 that no account has an e-mail.)
    @Sendable package func grantByEmail(_ request: Request, context: ServiceRequestContext) async throws -> Granted {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        let body = try await JSONBody.decode(StudyTeamGrant.self, from: request, context: context)
        guard let adminId = try await store.adminId(email: body.email) else {
            throw APIError.notFound("no admin account has the e-mail \(body.email); a super-admin invites admins")
        }
        guard try await store.grant(adminId: adminId, studyId: studyId, role: body.role) else {
            throw APIError.notFound("no study \(studyId)")
        }
        try await audit.record(
            actor: admin.email, action: "study.role_granted", studyId: studyId,
            details: ["adminId": adminId.uuidString, "role": body.role.rawValue])
        return Granted(adminId: adminId, studyId: studyId, role: body.role)
    }

    @Sendable package func grant(_ request: Request, context: ServiceRequestContext) async throws -> Granted {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        let adminId = try context.parameters.require("adminId", as: UUID.self)
        let body = try await JSONBody.decode(GrantRequest.self, from: request, context: context)
        guard try await store.exists(adminId: adminId) else { throw APIError.notFound("no admin \(adminId)") }
        guard try await store.grant(adminId: adminId, studyId: studyId, role: body.role) else {
            throw APIError.notFound("no study \(studyId)")
        }
        try await audit.record(
            actor: admin.email, action: "study.role_granted", studyId: studyId,
            details: ["adminId": adminId.uuidString, "role": body.role.rawValue])
        return Granted(adminId: adminId, studyId: studyId, role: body.role)
    }

    @Sendable package func revoke(_ request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        let adminId = try context.parameters.require("adminId", as: UUID.self)
        guard try await store.revoke(adminId: adminId, studyId: studyId) else {
            throw APIError.notFound("admin \(adminId) has no role on \(studyId)")
        }
        try await audit.record(
            actor: admin.email, action: "study.role_revoked", studyId: studyId, details: ["adminId": adminId.uuidString])
        return .noContent
    }

    /// Every event for a super-admin; a study's own events for its study admins.
    @Sendable package func auditEvents(_ request: Request, context: ServiceRequestContext) async throws -> AuditLog.EventList {
        let studyId = request.uri.formParameters["studyId"].map(String.init)
        let admin = try await authenticator.authenticate(request)
        if admin.role != .superAdmin {
            guard let studyId else { throw APIError.forbidden("only super-admins read the whole audit log; name a study (studyId)") }
            _ = try await authenticator.require(.studyAdmin, on: studyId, request)
        }
        guard let limit = request.uri.formParameters["limit"].map({ Int(String($0)) }) ?? 100, (1...1000).contains(limit) else {
            throw APIError.badRequest("limit must be 1 to 1000", field: "limit")
        }
        return AuditLog.EventList(events: try await audit.list(studyId: studyId, limit: limit))
    }
}
