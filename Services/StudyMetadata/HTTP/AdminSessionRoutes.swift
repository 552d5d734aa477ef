import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `POST /admin/v1/login`, `POST /admin/v1/logout`, `GET /admin/v1/me`,
/// `POST /admin/v1/invitations/accept`.
package struct AdminSessionRoutes {
    package struct Accepted: ResponseEncodable {
        package var email: String
    }

    package let sessions: AdminSessions
    package let rateLimiter: RateLimiter

    package init(sessions: AdminSessions, rateLimiter: RateLimiter) {
        self.sessions = sessions
        self.rateLimiter = rateLimiter
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.onPublic(AdminCalls.login, use: login)
        routes.on(AdminCalls.logout, use: logout)
        routes.on(AdminCalls.me, use: me)
        routes.onPublic(AdminCalls.acceptInvitation, use: acceptInvitation)
    }

    @Sendable package func login(_ request: Request, context: ServiceRequestContext) async throws -> AdminSignedIn {
        let body = try await JSONBody.decode(AdminSignIn.self, from: request, context: context)
        // Per address and per account, before any hashing: bcrypt is the expensive part.
        let address = rateLimiter.addresses.resolve(request, context: context)
        guard try await rateLimiter.allow("admin.login", from: address),
            try await rateLimiter.allow("admin.login.account", from: body.email.lowercased())
        else {
            try await sessions.audit.record(actor: body.email, action: "admin.login_refused", details: ["reason": "rate limited"])
            throw APIError.tooManyRequests("too many sign-in attempts; wait a minute and try again")
        }
        return try await sessions.signIn(email: body.email, password: body.password)
    }

    @Sendable package func logout(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> HTTPResponse.Status {
        try await sessions.signOut(admin)
        return .noContent
    }

    @Sendable package func me(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> AdminProfile {
        return AdminProfile(id: admin.id, email: admin.email, role: admin.role, studyRoles: admin.studyRoles)
    }

    @Sendable package func acceptInvitation(_ request: Request, context: ServiceRequestContext) async throws -> Accepted {
        let body = try await JSONBody.decode(AdminInvitationAcceptance.self, from: request, context: context)
        let email = try await sessions.acceptInvitation(token: body.token, password: body.password)
        return Accepted(email: email)
    }
}
