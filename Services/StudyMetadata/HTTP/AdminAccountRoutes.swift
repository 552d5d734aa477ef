import AdminAuthHTTP
import AdminContracts
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

    package init(teams: AdminTeams, store: AdminStore, audit: AuditLog) {
        self.teams = teams
        self.store = store
        self.audit = audit
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.inviteAdmin, use: invite)
        routes.on(AdminCalls.admins, use: list)
        routes.on(AdminCalls.grantRole, use: grant)
        routes.on(AdminCalls.revokeRole, use: revoke)
        routes.on(AdminCalls.team, use: team)
        routes.on(AdminCalls.grantByEmail, use: grantByEmail)
        routes.on(AdminCalls.audit, use: auditEvents)
    }

    @Sendable package func invite(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<AdminInvited> {
        let body = try await JSONBody.decode(AdminInvite.self, from: request, context: context)
        let invited = try await teams.invite(email: body.email, role: body.role ?? .admin, by: admin.email)
        return EditedResponse(status: .created, response: invited)
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> AdminAccountList {
        return AdminAccountList(admins: try await store.list())
    }

    /// Who holds a role on the study: what its study admins manage.
    @Sendable package func team(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> StudyTeam {
        let studyId = try context.parameters.decoded("studyId")
        return StudyTeam(members: try await store.team(studyId: studyId))
    }

    /// A role for the admin with an e-mail: a study admin knows colleagues by their e-mail, not
    /// by their account id. (A study admin learns from a 404 that no account has an e-mail.)
    @Sendable package func grantByEmail(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> Granted {
        let studyId = try context.parameters.decoded("studyId")
        let body = try await JSONBody.decode(StudyTeamGrant.self, from: request, context: context)
        let adminId = try await teams.grant(body.role, on: studyId, to: .email(body.email), by: admin.email)
        return Granted(adminId: adminId, studyId: studyId, role: body.role)
    }

    @Sendable package func grant(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> Granted {
        let studyId = try context.parameters.decoded("studyId")
        let adminId = try context.parameters.require("adminId", as: UUID.self)
        let body = try await JSONBody.decode(GrantRequest.self, from: request, context: context)
        try await teams.grant(body.role, on: studyId, to: .id(adminId), by: admin.email)
        return Granted(adminId: adminId, studyId: studyId, role: body.role)
    }

    @Sendable package func revoke(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> HTTPResponse.Status {
        let studyId = try context.parameters.decoded("studyId")
        let adminId = try context.parameters.require("adminId", as: UUID.self)
        try await teams.revoke(adminId: adminId, on: studyId, by: admin.email)
        return .noContent
    }

    /// Every event for a super-admin; a study's own events for its study admins.
    @Sendable package func auditEvents(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> AuditLog.EventList {
        let studyId = request.uri.formParameters["studyId"].map(String.init)
        if admin.role != .superAdmin {
            guard let studyId else { throw StudyMetadataError.wholeAuditLogNeedsSuperAdmin }
            // The study is in the query, not the path: its role is checked here, not by the mount.
            guard admin.may(.studyAdmin, on: studyId) else { throw StudyMetadataError.roleRequired(.studyAdmin, studyId: studyId) }
        }
        guard let limit = request.uri.formParameters["limit"].map({ Int(String($0)) }) ?? 100, (1...1000).contains(limit) else {
            throw APIError.badRequest("limit must be 1 to 1000", field: "limit")
        }
        return AuditLog.EventList(events: try await audit.list(studyId: studyId, limit: limit))
    }
}
