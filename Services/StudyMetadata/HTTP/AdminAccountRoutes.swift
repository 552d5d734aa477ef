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

    package let teams: AdminTeams
    /// The admins and study teams, listed as stored.
    package let store: AdminStore
    /// The audit log, read.
    package let audit: AuditLog
    package let authenticator: AdminTokenAuthenticator

    package init(teams: AdminTeams, store: AdminStore, audit: AuditLog, authenticator: AdminTokenAuthenticator) {
        self.teams = teams
        self.store = store
        self.audit = audit
        self.authenticator = authenticator
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
        let invited = try await teams.invite(email: body.email, role: body.role ?? .admin, by: admin.email)
        return EditedResponse(status: .created, response: invited)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> AdminAccountList {
        _ = try await authenticator.requireSuperAdmin(request)
        return AdminAccountList(admins: try await store.list())
    }

    /// Who holds a role on the study: what its study admins manage.
    @Sendable package func team(_ request: Request, context: ServiceRequestContext) async throws -> StudyTeam {
        let studyId = try context.parameters.decoded("studyId")
        _ = try await authenticator.require(.studyAdmin, on: studyId, request)
        return StudyTeam(members: try await store.team(studyId: studyId))
    }

    /// A role for the admin with an e-mail: a study admin knows colleagues by their e-mail, not
    /// by their account id. (A study admin learns from a 404 that no account has an e-mail.)
    @Sendable package func grantByEmail(_ request: Request, context: ServiceRequestContext) async throws -> Granted {
        let studyId = try context.parameters.decoded("studyId")
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        let body = try await JSONBody.decode(StudyTeamGrant.self, from: request, context: context)
        let adminId = try await teams.grant(body.role, on: studyId, to: .email(body.email), by: admin.email)
        return Granted(adminId: adminId, studyId: studyId, role: body.role)
    }

    @Sendable package func grant(_ request: Request, context: ServiceRequestContext) async throws -> Granted {
        let studyId = try context.parameters.decoded("studyId")
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        let adminId = try context.parameters.require("adminId", as: UUID.self)
        let body = try await JSONBody.decode(GrantRequest.self, from: request, context: context)
        try await teams.grant(body.role, on: studyId, to: .id(adminId), by: admin.email)
        return Granted(adminId: adminId, studyId: studyId, role: body.role)
    }

    @Sendable package func revoke(_ request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let studyId = try context.parameters.decoded("studyId")
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        let adminId = try context.parameters.require("adminId", as: UUID.self)
        try await teams.revoke(adminId: adminId, on: studyId, by: admin.email)
        return .noContent
    }

    /// Every event for a super-admin; a study's own events for its study admins.
    @Sendable package func auditEvents(_ request: Request, context: ServiceRequestContext) async throws -> AuditLog.EventList {
        let studyId = request.uri.formParameters["studyId"].map(String.init)
        let admin = try await authenticator.authenticate(request)
        if admin.role != .superAdmin {
            guard let studyId else { throw StudyMetadataError.wholeAuditLogNeedsSuperAdmin }
            _ = try await authenticator.require(.studyAdmin, on: studyId, request)
        }
        guard let limit = request.uri.formParameters["limit"].map({ Int(String($0)) }) ?? 100, (1...1000).contains(limit) else {
            throw APIError.badRequest("limit must be 1 to 1000", field: "limit")
        }
        return AuditLog.EventList(events: try await audit.list(studyId: studyId, limit: limit))
    }
}
