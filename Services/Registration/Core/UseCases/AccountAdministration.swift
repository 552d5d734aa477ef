import Foundation
import ServiceKit

/// What an admin may do to an app account: disable it (it cannot sign in, and every device is
/// signed out), enable it again, lift a lockout, send a new verification code. Each change commits
/// with its audit event naming the admin; asking for what already holds changes nothing and
/// answers false. Refusals are `RegistrationAdminError`s.
package struct AccountAdministration: Sendable {
    package let accounts: Accounts

    package init(accounts: Accounts) {
        self.accounts = accounts
    }

    @discardableResult
    package func setDisabled(_ disabled: Bool, userId: UUID, appId: String, actor: String) async throws -> Bool {
        try await accounts.transactions.run { work in
            guard let account = try await work.lock(userId: userId), account.appId == appId else {
                throw RegistrationAdminError.noAccount(appId: appId)
            }
            guard try await work.setDisabled(userId: userId, disabled) else { return false }
            if disabled {
                try await work.revokeSessions(userId: userId, except: nil, reason: "disabled by an admin")
            }
            try await work.record(
                actor: actor, action: disabled ? "account.disabled" : "account.enabled",
                details: ["userId": userId.uuidString.lowercased(), "appId": appId])
            return true
        }
    }

    /// Forgets the failed sign-ins that lock the account.
    @discardableResult
    package func unlock(userId: UUID, appId: String, actor: String) async throws -> Bool {
        guard let account = try await accounts.participants.find(userId: userId), account.appId == appId else {
            throw RegistrationAdminError.noAccount(appId: appId)
        }
        guard try await accounts.attempts.lockedUntil(Accounts.loginSubject(userId)) != nil else { return false }
        try await accounts.transactions.run { work in
            try await work.attemptsSucceeded(Accounts.loginSubject(userId))
            try await work.record(
                actor: actor, action: "account.unlocked", details: ["userId": userId.uuidString.lowercased(), "appId": appId])
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
