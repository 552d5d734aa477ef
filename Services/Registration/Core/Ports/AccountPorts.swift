import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

// What the account rules (`Accounts`, `AccountAdministration`) need of storage. Reads that stand
// alone go through `AccountLookup`, `AppDirectory` and `SessionRefresh`; every change goes through
// one unit of work (`Transactions<any AccountWork>`), whose `AccountWork` is the stores bound to
// its transaction. The PostgreSQL stores conform here; the tests' `InMemoryAccounts` stands in for
// all of them.

/// Participant accounts, read outside a transaction.
package protocol AccountLookup: Sendable {
    func find(appId: String, orgId: String, email: String) async throws -> Participant?
    func find(userId: UUID) async throws -> Participant?
}

/// The apps study-metadata has sent: an account belongs to one of them (an app within its
/// organisation); an invitation's e-mail names one by its id alone.
package protocol AppDirectory: Sendable {
    func app(appId: String, orgId: String) async throws -> AppDefinition?
    func app(appId: String) async throws -> AppDefinition?
}

/// Sessions as the account rules use them outside a transaction: a refresh exchanges a token in a
/// transaction of the store's own, since its reuse check is the statement's.
package protocol SessionRefresh: Sendable {
    func refresh(token: String, auth: String?, appId: String, orgId: String, now: Date) async throws -> SessionStore.RefreshOutcome
    /// The temporary password a session was opened with, while it is valid.
    func temporaryPasswordHash(sessionId: UUID, now: Date) async throws -> String?
}

/// What the account rules change, inside one transaction.
package protocol AccountWork {
    /// A new unverified account with its first password in the history; false when the e-mail
    /// is taken in this app and organisation.
    func create(
        userId: UUID, appId: String, orgId: String, email: String, passwordHash: String, codeHash: String, codeExpiresAt: Date
    ) async throws -> Bool
    /// The account, locked until the transaction ends.
    func lock(userId: UUID) async throws -> Participant?
    func setCode(userId: UUID, hash: String, expiresAt: Date) async throws
    /// Verified, and the code spent.
    func markVerified(userId: UUID) async throws
    /// After a sign-in: a temporary password used is spent.
    func recordLogin(userId: UUID, usedTemporaryPassword: Bool) async throws
    func setTemporaryPassword(userId: UUID, hash: String, expiresAt: Date) async throws
    /// The newest `count` password hashes, newest first.
    func recentPasswordHashes(userId: UUID, count: Int) async throws -> [String]
    /// The new password, any temporary one spent, the history cut to `keep`.
    func changePassword(userId: UUID, hash: String, keep: Int) async throws
    /// The same password's hash in another scheme (a carried-over one made the platform's own),
    /// where the account and its history hold `old`: nothing else changes.
    func rehashPassword(userId: UUID, from old: String, to new: String) async throws
    /// False when the account already was so.
    func setDisabled(userId: UUID, _ disabled: Bool) async throws -> Bool
    func openSession(userId: UUID, now: Date, temporaryPassword: (hash: String, expiresAt: Date)?) async throws
        -> SessionStore.Issued
    func revokeSession(sessionId: UUID, reason: String) async throws
    /// Every session of the user but `keep`.
    func revokeSessions(userId: UUID, except keep: UUID?, reason: String) async throws
    /// A changed password makes the temporary one every session signed in with worthless.
    func forgetTemporaryPasswords(userId: UUID) async throws
    /// Forgets the tries counted at `subject`.
    func attemptsSucceeded(_ subject: String) async throws
    func app(appId: String, orgId: String) async throws -> AppDefinition?
    /// Queues `message`, sealed, for the mail sender.
    func enqueue(_ message: MailMessage, kind: MailKind, appId: String) async throws
    func record(actor: String, action: String, details: [String: String]) async throws
}

extension AccountStore: AccountLookup {}

extension AppSettingsStore: AppDirectory {
    package func app(appId: String, orgId: String) async throws -> AppDefinition? {
        try await app(appId: appId, orgId: orgId, on: nil)
    }
}

extension SessionStore: SessionRefresh {}

/// The registration stores bound to one transaction's connection.
package struct PostgresAccountWork: AccountWork {
    package let connection: PostgresConnection
    package let accounts: AccountStore
    package let sessions: SessionStore
    package let apps: AppSettingsStore
    package let mail: MailOutbox
    package let attempts: AttemptCounter
    package let audit: AuditLog

    /// Units of work over these stores.
    package static func transactions(
        client: PostgresClient, accounts: AccountStore, sessions: SessionStore, apps: AppSettingsStore, mail: MailOutbox,
        attempts: AttemptCounter, audit: AuditLog, logger: Logger
    ) -> PostgresTransactions<any AccountWork> {
        PostgresTransactions(client: client, logger: logger) { connection in
            PostgresAccountWork(
                connection: connection, accounts: accounts, sessions: sessions, apps: apps, mail: mail, attempts: attempts,
                audit: audit)
        }
    }

    package func create(
        userId: UUID, appId: String, orgId: String, email: String, passwordHash: String, codeHash: String, codeExpiresAt: Date
    ) async throws -> Bool {
        try await accounts.create(
            userId: userId, appId: appId, orgId: orgId, email: email, passwordHash: passwordHash, codeHash: codeHash,
            codeExpiresAt: codeExpiresAt, on: connection)
    }

    package func lock(userId: UUID) async throws -> Participant? { try await accounts.lock(userId: userId, on: connection) }

    package func setCode(userId: UUID, hash: String, expiresAt: Date) async throws {
        try await accounts.setCode(userId: userId, hash: hash, expiresAt: expiresAt, on: connection)
    }

    package func markVerified(userId: UUID) async throws { try await accounts.markVerified(userId: userId, on: connection) }

    package func recordLogin(userId: UUID, usedTemporaryPassword: Bool) async throws {
        try await accounts.recordLogin(userId: userId, usedTemporaryPassword: usedTemporaryPassword, on: connection)
    }

    package func setTemporaryPassword(userId: UUID, hash: String, expiresAt: Date) async throws {
        try await accounts.setTemporaryPassword(userId: userId, hash: hash, expiresAt: expiresAt, on: connection)
    }

    package func recentPasswordHashes(userId: UUID, count: Int) async throws -> [String] {
        try await accounts.recentPasswordHashes(userId: userId, count: count, on: connection)
    }

    package func changePassword(userId: UUID, hash: String, keep: Int) async throws {
        try await accounts.changePassword(userId: userId, hash: hash, keep: keep, on: connection)
    }

    package func rehashPassword(userId: UUID, from old: String, to new: String) async throws {
        try await accounts.rehashPassword(userId: userId, from: old, to: new, on: connection)
    }

    package func setDisabled(userId: UUID, _ disabled: Bool) async throws -> Bool {
        try await accounts.setDisabled(userId: userId, disabled, on: connection)
    }

    package func openSession(userId: UUID, now: Date, temporaryPassword: (hash: String, expiresAt: Date)?) async throws
        -> SessionStore.Issued
    {
        try await sessions.open(userId: userId, now: now, temporaryPassword: temporaryPassword, on: connection)
    }

    package func revokeSession(sessionId: UUID, reason: String) async throws {
        try await sessions.revoke(sessionId: sessionId, reason: reason, on: connection)
    }

    package func revokeSessions(userId: UUID, except keep: UUID?, reason: String) async throws {
        try await sessions.revokeAll(userId: userId, except: keep, reason: reason, on: connection)
    }

    package func forgetTemporaryPasswords(userId: UUID) async throws {
        try await sessions.forgetTemporaryPasswords(userId: userId, on: connection)
    }

    package func attemptsSucceeded(_ subject: String) async throws { try await attempts.succeeded(subject, on: connection) }

    package func app(appId: String, orgId: String) async throws -> AppDefinition? {
        try await apps.app(appId: appId, orgId: orgId, on: connection)
    }

    package func enqueue(_ message: MailMessage, kind: MailKind, appId: String) async throws {
        try await mail.enqueue(message, kind: kind, appId: appId, on: connection)
    }

    package func record(actor: String, action: String, details: [String: String]) async throws {
        try await audit.record(actor: actor, action: action, details: details, on: connection)
    }
}

/// A participant's profile, read outside a transaction (`ProfileUpdates`).
package protocol ProfileLookup: Sendable {
    func profile(userId: UUID) async throws -> UserProfileReply?
}

/// What `updateUserProfile` changes, inside one transaction.
package protocol ProfileWork {
    func saveSettings(_ settings: UserProfileReply.Settings, userId: UUID) async throws
    /// The session's device: its push token (taken off any other session that had it), its
    /// platform and app version; nil keeps what is there.
    func setDevice(sessionId: UUID, token: String?, os: String?, appVersion: String?) async throws
}

extension ProfileStore: ProfileLookup {}

/// `ProfileStore` bound to one transaction's connection.
package struct PostgresProfileWork: ProfileWork {
    package let connection: PostgresConnection
    package let profiles: ProfileStore

    /// Units of work over the profile store.
    package static func transactions(client: PostgresClient, profiles: ProfileStore, logger: Logger)
        -> PostgresTransactions<any ProfileWork>
    {
        PostgresTransactions(client: client, logger: logger) { PostgresProfileWork(connection: $0, profiles: profiles) }
    }

    package func saveSettings(_ settings: UserProfileReply.Settings, userId: UUID) async throws {
        try await profiles.saveSettings(settings, userId: userId, on: connection)
    }

    package func setDevice(sessionId: UUID, token: String?, os: String?, appVersion: String?) async throws {
        try await profiles.setDevice(sessionId: sessionId, token: token, os: os, appVersion: appVersion, on: connection)
    }
}
