import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The account calls of `/fdahpUserRegWS/<name>.api`.
package struct ParticipantAccountRoutes {
    package let accounts: Accounts
    package let authenticator: ParticipantAuthenticator
    package let rateLimiter: RateLimiter

    package init(accounts: Accounts, authenticator: ParticipantAuthenticator, rateLimiter: RateLimiter) {
        self.accounts = accounts
        self.authenticator = authenticator
        self.rateLimiter = rateLimiter
    }

    package func add(to router: Router<ServiceRequestContext>) {
        for controller in UserRegPaths.controllers {
            let group = router.group(RouterPath(controller))
            let sessions = authenticator.routes(group)
            group.get("ping.api") { _, _ in RegistrationSuccess() }
            group.post("register.api", use: register)
            group.post("verify.api", use: verify)
            group.post("resendConfirmation.api", use: resendConfirmation)
            sessions.get("confirmRegistration.api", use: confirmRegistration)
            group.post("login.api", use: login)
            group.post("refreshToken.api", use: refreshToken)
            group.post("forgotPassword.api", use: forgotPassword)
            sessions.post("changePassword.api", use: changePassword)
            sessions.delete("logout.api", use: logout)
            UserRegPaths.refuseOtherMethods(of: "logout.api", allowing: .delete, in: group)
        }
    }

    @Sendable package func register(_ request: Request, context: ServiceRequestContext) async throws -> SessionReply {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("register", call)
        return try await accounts.register(
            email: try call.required("emailId"), password: try call.requiredSecret("password"), appId: call.appId,
            orgId: call.orgId)
    }

    @Sendable package func verify(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("verify", call)
        try await accounts.verify(
            email: try call.required("emailId"), code: try call.required("code"), appId: call.appId, orgId: call.orgId)
        return RegistrationSuccess()
    }

    @Sendable package func resendConfirmation(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("resendConfirmation", call)
        try await accounts.resendCode(email: try call.required("emailId"), appId: call.appId, orgId: call.orgId)
        return RegistrationSuccess()
    }

    @Sendable package func confirmRegistration(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> VerifiedReply {
        let session = participant.session
        guard let account = try await accounts.participants.find(userId: session.userId) else {
            throw RegistrationError.sessionExpired
        }
        return VerifiedReply(verified: account.verified)
    }

    @Sendable package func login(_ request: Request, context: ServiceRequestContext) async throws -> SessionReply {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("login", call)
        return try await accounts.login(
            email: try call.required("emailId"), password: try call.requiredSecret("password"), appId: call.appId,
            orgId: call.orgId)
    }

    @Sendable package func refreshToken(_ request: Request, context: ServiceRequestContext) async throws -> SessionReply {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("refreshToken", call)
        return try await accounts.refresh(
            token: try call.required("refreshToken"), auth: call.header("auth"), appId: call.appId, orgId: call.orgId)
    }

    @Sendable package func forgotPassword(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("forgotPassword", call)
        try await accounts.forgotPassword(email: try call.required("emailId"), appId: call.appId, orgId: call.orgId)
        return RegistrationSuccess()
    }

    @Sendable package func changePassword(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let (call, session) = (participant.call, participant.session)
        try await accounts.changePassword(
            session, current: try call.requiredSecret("currentPassword"), new: try call.requiredSecret("newPassword"))
        return RegistrationSuccess()
    }

    @Sendable package func logout(
        _ request: Request, context: ServiceRequestContext, participant: ParticipantCall
    ) async throws -> RegistrationSuccess {
        let session = participant.session
        try await accounts.logout(session)
        return RegistrationSuccess()
    }

    private func limit(_ action: String, _ call: UserRegCall) async throws {
        guard try await rateLimiter.allow(action, from: call.clientAddress(using: rateLimiter.addresses)) else { throw RegistrationError.tooMany }
    }
}

/// The controller path the apps use, in the casings the original LabKey server accepted.
package enum UserRegPaths {
    package static let controllers = ["/fdahpUserRegWS", "/fdahpuserregws"]

    package static func isRegistrationPath(_ path: String) -> Bool {
        controllers.contains { path.hasPrefix($0 + "/") }
    }

    /// DELETE-only calls answer 405 to other methods, as the original did.
    package static func refuseOtherMethods(
        of name: String, allowing allowed: HTTPRequest.Method, in group: RouterGroup<ServiceRequestContext>
    ) {
        for method in [HTTPRequest.Method.get, .post, .put] where method != allowed {
            group.on(RouterPath(name), method: method) { _, _ -> Response in
                throw APIError(
                    .methodNotAllowed, code: "method_not_allowed", message: "Use \(allowed.rawValue) for \(name).",
                    statusMessageCode: .invalidInput, headers: [.allow: allowed.rawValue])
            }
        }
    }
}
