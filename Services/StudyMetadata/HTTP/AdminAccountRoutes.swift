import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// Super-admins invite admins; super-admins and study admins grant per-study roles;
/// super-admins read the audit log.
package struct AdminAccountRoutes {
    package struct InviteRequest: Decodable {
        package var email: String
        package var role: AdminRole?
    }

    package struct Invited: ResponseEncodable {
        package struct Invitation: Encodable {
            /// Shown once: the invitee sends it to `POST /admin/v1/invitations/accept`.
            package var token: String
            package var expiresAt: Date
        }

        package var id: UUID
        package var email: String
        package var role: AdminRole
        package var invitation: Invitation
    }

    package struct AdminList: ResponseEncodable {
        package var admins: [AdminStore.Summary]
    }

    package struct GrantRequest: Decodable {
        package var role: StudyRole
    }

    package struct Granted: ResponseEncodable {
        package var adminId: UUID
        package var studyId: String
        package var role: StudyRole
    }

    package struct AuditList: ResponseEncodable {
        package var events: [AuditLog.Event]
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
        router.get("/admin/v1/audit", use: auditEvents)
    }

    @Sendable package func invite(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Invited> {
        let admin = try await authenticator.requireSuperAdmin(request)
        let body = try await JSONBody.decode(InviteRequest.self, from: request, context: context)
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
            response: Invited(id: id, email: body.email, role: role, invitation: .init(token: token, expiresAt: expiresAt)))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> AdminList {
        _ = try await authenticator.requireSuperAdmin(request)
        return AdminList(admins: try await store.list())
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

    @Sendable package func auditEvents(_ request: Request, context: ServiceRequestContext) async throws -> AuditList {
        _ = try await authenticator.requireSuperAdmin(request)
        let studyId = request.uri.formParameters["studyId"].map(String.init)
        guard let limit = request.uri.formParameters["limit"].map({ Int(String($0)) }) ?? 100, (1...1000).contains(limit) else {
            throw APIError.badRequest("limit must be 1 to 1000", field: "limit")
        }
        return AuditList(events: try await audit.list(studyId: studyId, limit: limit))
    }
}
