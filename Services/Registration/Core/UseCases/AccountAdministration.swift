import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// What an admin may do to an app account: disable it (it cannot sign in, and every device is
/// signed out), enable it again, lift a lockout, send a new verification code. Each change commits
/// with its audit event naming the admin.
package struct AccountAdministration: Sendable {
    package enum Outcome: Sendable, Equatable {
        case done
        /// The account already was as asked (disabled, enabled or not locked).
        case unchanged
        case notFound
        case alreadyVerified
        case disabled
    }

    package let client: PostgresClient
    package let accounts: Accounts
    package let logger: Logger

    package init(client: PostgresClient, accounts: Accounts, logger: Logger) {
        self.client = client
        self.accounts = accounts
        self.logger = logger
    }

    package func setDisabled(_ disabled: Bool, userId: UUID, appId: String, actor: String) async throws -> Outcome {
        try await client.withTransaction(logger: logger) { connection -> Outcome in
            guard let account = try await accounts.participants.lock(userId: userId, on: connection), account.appId == appId else {
                return .notFound
            }
            guard try await accounts.participants.setDisabled(userId: userId, disabled, on: connection) else { return .unchanged }
            if disabled {
                try await accounts.sessions.revokeAll(userId: userId, reason: "disabled by an admin", on: connection)
            }
            try await accounts.audit.record(
                actor: actor, action: disabled ? "account.disabled" : "account.enabled",
                details: ["userId": userId.uuidString.lowercased(), "appId": appId], on: connection)
            return .done
        }
    }

    /// Forgets the failed sign-ins that lock the account.
    package func unlock(userId: UUID, appId: String, actor: String) async throws -> Outcome {
        guard let account = try await accounts.participants.find(userId: userId), account.appId == appId else { return .notFound }
        guard try await accounts.attempts.lockedUntil(Accounts.loginSubject(userId)) != nil else { return .unchanged }
        try await client.withTransaction(logger: logger) { connection in
            try await accounts.attempts.succeeded(Accounts.loginSubject(userId), on: connection)
            try await accounts.audit.record(
                actor: actor, action: "account.unlocked", details: ["userId": userId.uuidString.lowercased(), "appId": appId],
                on: connection)
        }
        return .done
    }

    /// A new verification code by e-mail, for an account that has not confirmed its address.
    package func resendVerification(userId: UUID, appId: String, actor: String) async throws -> Outcome {
        guard let account = try await accounts.participants.find(userId: userId), account.appId == appId else { return .notFound }
        if account.disabledAt != nil { return .disabled }
        if account.verified { return .alreadyVerified }
        try await accounts.sendNewCode(to: account, actor: actor)
        return .done
    }
}
