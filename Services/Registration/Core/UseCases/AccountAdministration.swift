import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// What an admin may do to an app account: disable it (it cannot sign in, and every device is
/// signed out), enable it again, lift a lockout, send a new verification code. Each change commits
/// with its audit event naming the admin; asking for what already holds changes nothing and
/// answers false. Refusals are `RegistrationAdminError`s.
package struct AccountAdministration: Sendable {
    package let client: PostgresClient
    package let accounts: Accounts
    package let logger: Logger

    package init(client: PostgresClient, accounts: Accounts, logger: Logger) {
        self.client = client
        self.accounts = accounts
        self.logger = logger
    }

    @discardableResult
    package func setDisabled(_ disabled: Bool, userId: UUID, appId: String, actor: String) async throws -> Bool {
        let found = try await client.withTransaction(logger: logger) { connection -> Bool? in
            guard let account = try await accounts.participants.lock(userId: userId, on: connection), account.appId == appId else {
                return nil
            }
            guard try await accounts.participants.setDisabled(userId: userId, disabled, on: connection) else { return false }
            if disabled {
                try await accounts.sessions.revokeAll(userId: userId, reason: "disabled by an admin", on: connection)
            }
            try await accounts.audit.record(
                actor: actor, action: disabled ? "account.disabled" : "account.enabled",
                details: ["userId": userId.uuidString.lowercased(), "appId": appId], on: connection)
            return true
        }
        guard let found else { throw RegistrationAdminError.noAccount(appId: appId) }
        return found
    }

    /// Forgets the failed sign-ins that lock the account.
    @discardableResult
    package func unlock(userId: UUID, appId: String, actor: String) async throws -> Bool {
        guard let account = try await accounts.participants.find(userId: userId), account.appId == appId else {
            throw RegistrationAdminError.noAccount(appId: appId)
        }
        guard try await accounts.attempts.lockedUntil(Accounts.loginSubject(userId)) != nil else { return false }
        try await client.withTransaction(logger: logger) { connection in
            try await accounts.attempts.succeeded(Accounts.loginSubject(userId), on: connection)
            try await accounts.audit.record(
                actor: actor, action: "account.unlocked", details: ["userId": userId.uuidString.lowercased(), "appId": appId],
                on: connection)
        }
        return true
    }

    /// A new verification code by e-mail, for an account that has not confirmed its address.
    package func resendVerification(userId: UUID, appId: String, actor: String) async throws {
        guard let account = try await accounts.participants.find(userId: userId), account.appId == appId else {
            throw RegistrationAdminError.noAccount(appId: appId)
        }
        if account.disabledAt != nil { throw RegistrationAdminError.accountDisabled }
        if account.verified { throw RegistrationAdminError.accountAlreadyVerified }
        try await accounts.sendNewCode(to: account, actor: actor)
    }
}
