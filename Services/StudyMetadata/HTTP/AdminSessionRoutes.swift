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

    package let store: AdminStore
    package let authenticator: AdminTokenAuthenticator
    package let hasher: PasswordHasher
    package let attempts: AttemptCounter
    package let rateLimiter: RateLimiter
    package let audit: AuditLog
    package let settings: AdminSettings

    package init(
        store: AdminStore, authenticator: AdminTokenAuthenticator, hasher: PasswordHasher, attempts: AttemptCounter,
        rateLimiter: RateLimiter, audit: AuditLog, settings: AdminSettings
    ) {
        self.store = store
        self.authenticator = authenticator
        self.hasher = hasher
        self.attempts = attempts
        self.rateLimiter = rateLimiter
        self.audit = audit
        self.settings = settings
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/login", use: login)
        router.post("/admin/v1/logout", use: logout)
        router.get("/admin/v1/me", use: me)
        router.post("/admin/v1/invitations/accept", use: acceptInvitation)
    }

    @Sendable package func login(_ request: Request, context: ServiceRequestContext) async throws -> AdminSignedIn {
        let body = try await JSONBody.decode(AdminSignIn.self, from: request, context: context)
        // Per address and per account, before any hashing: bcrypt is the expensive part.
        let address = rateLimiter.addresses.resolve(request, context: context)
        guard try await rateLimiter.allow("admin.login", from: address),
            try await rateLimiter.allow("admin.login.account", from: body.email.lowercased())
        else {
            try await audit.record(actor: body.email, action: "admin.login_refused", details: ["reason": "rate limited"])
            throw APIError.tooManyRequests("too many sign-in attempts; wait a minute and try again")
        }
        let refused = APIError.unauthenticated("e-mail or password is wrong")
        guard let account = try await store.account(email: body.email), !account.disabled,
            let hash = account.passwordHash
        else {
            _ = try await hasher.verify(body.password, hash: PasswordHasher.decoyHash)
            try await audit.record(actor: body.email, action: "admin.login_failed", details: ["reason": "unknown account"])
            throw refused
        }
        // The try is counted before the hash, atomically: forty wrong passwords and the right one
        // sent together check at most `lockout.maxAttempts` of them.
        let subject = AdminStore.loginSubject(account.id)
        let isLast: Bool
        switch try await attempts.begin(subject, policy: AdminStore.lockout) {
        case .locked(let lockedUntil):
            try await audit.record(actor: account.email, action: "admin.login_refused", details: ["reason": "locked"])
            throw APIError(.forbidden, code: "locked", message: "too many failed logins; try again after \(lockedUntil.formatted(.iso8601))")
        case .allowed(let last):
            isLast = last
        }
        guard try await hasher.verify(body.password, hash: hash) else {
            try await audit.record(
                actor: account.email, action: "admin.login_failed",
                details: isLast ? ["reason": "wrong password", "locked": "true"] : ["reason": "wrong password"])
            throw refused
        }
        try await attempts.succeeded(subject)
        let token = SecureToken.generate()
        let expiresAt = Date().addingTimeInterval(TimeInterval(settings.sessionDuration.components.seconds))
        try await store.startSession(adminId: account.id, tokenHash: SecureToken.hash(token), expiresAt: expiresAt)
        try await audit.record(actor: account.email, action: "admin.login")
        let roles = try await store.studyRoles(adminId: account.id)
        return AdminSignedIn(
            token: token, expiresAt: expiresAt,
            admin: AdminProfile(id: account.id, email: account.email, role: account.role, studyRoles: roles))
    }

    @Sendable package func logout(_ request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let admin = try await authenticator.authenticate(request)
        try await store.revokeSession(tokenHash: admin.tokenHash)
        try await audit.record(actor: admin.email, action: "admin.logout")
        return .noContent
    }

    @Sendable package func me(_ request: Request, context: ServiceRequestContext) async throws -> AdminProfile {
        let admin = try await authenticator.authenticate(request)
        return AdminProfile(id: admin.id, email: admin.email, role: admin.role, studyRoles: admin.studyRoles)
    }

    @Sendable package func acceptInvitation(_ request: Request, context: ServiceRequestContext) async throws -> Accepted {
        let body = try await JSONBody.decode(AdminInvitationAcceptance.self, from: request, context: context)
        if let problem = PasswordPolicy.problem(with: body.password) {
            throw APIError.badRequest(problem, field: "password")
        }
        let hash = try await hasher.hash(body.password)
        guard let email = try await store.acceptInvitation(tokenHash: SecureToken.hash(body.token), passwordHash: hash) else {
            throw APIError(.gone, code: "invitation_invalid", message: "the invitation is unknown, already used or expired")
        }
        try await audit.record(actor: email, action: "admin.invitation_accepted")
        return Accepted(email: email)
    }
}
