import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `/admin/v1/apps/{appId}/users`: an app's accounts with their state, and what an admin may do
/// to one (disable, enable, unlock, send a new verification code). Super-admins only: an account
/// spans every study of its app, so no one study's role may reach it. Listing shows e-mail
/// addresses, so each page read is audited.
package struct AppAccountAdminRoutes: Sendable {
    package struct Sent: ResponseEncodable {
        package var sent: Bool
    }

    package let users: AppUserDirectory
    package let administration: AccountAdministration
    package let rateLimiter: RateLimiter
    package let audit: AuditLog

    /// Verification e-mails an admin may have sent to one account per minute.
    package static let resendsPerMinute = 2

    package init(
        users: AppUserDirectory, administration: AccountAdministration,
        rateLimiter: RateLimiter, audit: AuditLog
    ) {
        self.users = users
        self.administration = administration
        self.rateLimiter = rateLimiter
        self.audit = audit
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.appUsers, use: list)
        routes.on(AdminCalls.appUser, use: show)
        routes.on(AdminCalls.disableAppUser) { try await change($1, $2, to: .disable) }
        routes.on(AdminCalls.enableAppUser) { try await change($1, $2, to: .enable) }
        routes.on(AdminCalls.unlockAppUser) { try await change($1, $2, to: .unlock) }
        routes.on(AdminCalls.resendVerification, use: resendVerification)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> AppUserList {
        let appId = try context.parameters.decoded("appId")
        let query = try Self.query(request.uri.queryParameters, appId: appId)
        let list = try await users.users(query)
        if !list.users.isEmpty {
            try await audit.record(
                actor: admin.email, action: "app_users.identities_read",
                details: ["appId": appId, "count": String(list.users.count), "search": query.page.search ?? "", "state": query.state ?? ""])
        }
        return list
    }

    @Sendable package func show(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws -> AppUserList.User {
        let (appId, userId) = try Self.account(context)
        guard let user = try await users.user(appId: appId, userId: userId) else { throw RegistrationAdminError.noAccount(appId: appId) }
        try await audit.record(
            actor: admin.email, action: "app_users.identities_read",
            details: ["appId": appId, "count": "1", "userId": userId.uuidString.lowercased()])
        return user
    }

    enum Change { case disable, enable, unlock }

    /// Answers the account as it is after the change; asking for what already holds changes nothing.
    private func change(_ context: ServiceRequestContext, _ admin: AdminIdentity, to change: Change) async throws -> AppUserList.User {
        let (appId, userId) = try Self.account(context)
        switch change {
        case .disable: try await administration.setDisabled(true, userId: userId, appId: appId, actor: admin.email)
        case .enable: try await administration.setDisabled(false, userId: userId, appId: appId, actor: admin.email)
        case .unlock: try await administration.unlock(userId: userId, appId: appId, actor: admin.email)
        }
        guard let user = try await users.user(appId: appId, userId: userId) else { throw RegistrationAdminError.noAccount(appId: appId) }
        return user
    }

    @Sendable package func resendVerification(_ request: Request, context: ServiceRequestContext, admin: AdminIdentity) async throws
        -> EditedResponse<Sent>
    {
        let (appId, userId) = try Self.account(context)
        guard try await rateLimiter.allow("admin.verification_email", from: userId.uuidString, limit: Self.resendsPerMinute) else {
            throw APIError.tooManyRequests("a verification e-mail was just sent to this account; try again in a minute")
        }
        try await administration.resendVerification(userId: userId, appId: appId, actor: admin.email)
        return EditedResponse(status: .accepted, response: Sent(sent: true))
    }

    static func account(_ context: ServiceRequestContext) throws -> (appId: String, userId: UUID) {
        let appId = try context.parameters.decoded("appId")
        guard let userId = UUID(uuidString: try context.parameters.decoded("userId")) else { throw RegistrationAdminError.noAccount(appId: appId) }
        return (appId, userId)
    }

    /// The page asked for, each parameter checked: a wrong one is refused (400) by name.
    static func query(_ parameters: Parameters, appId: String) throws -> AppUserDirectory.Query {
        let state = parameters["state"].map(String.init)
        if let state, !AppUserList.states.contains(state) {
            throw APIError.badRequest("state must be one of \(AppUserList.states.joined(separator: ", "))", field: "state")
        }
        return .init(
            appId: appId, state: state, page: try ListPage(parameters, maxLimit: AdminParticipantRoutes.maxLimit, afterName: "a userId"))
    }
}

extension AppUserList: ResponseEncodable {}
extension AppUserList.User: ResponseEncodable {}
