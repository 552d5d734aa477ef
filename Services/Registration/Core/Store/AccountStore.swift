import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Participant accounts: creation, look-ups, verification codes, temporary passwords and
/// password changes with their history. (Failed tries are counted by ServiceKit's
/// `AttemptCounter`.)
package struct AccountStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    package static let columns = """
        user_id, app_id, org_id, email, password_hash, password_changed_at, temp_password_hash,
        temp_password_expires_at, verified, code_hash, code_expires_at, first_name, last_name, disabled_at
        """

    /// Creates an unverified account; nil when the e-mail is taken in this app and organisation.
    package func create(
        userId: UUID, appId: String, orgId: String, email: String, passwordHash: String, codeHash: String,
        codeExpiresAt: Date, on connection: PostgresConnection
    ) async throws -> Bool {
        let rows = try await connection.query(
            """
            INSERT INTO participants (user_id, app_id, org_id, email, email_key, password_hash, code_hash, code_expires_at)
            VALUES (\(userId), \(appId), \(orgId), \(email), \(EmailKey.of(email)), \(passwordHash), \(codeHash), \(codeExpiresAt))
            ON CONFLICT (app_id, org_id, email_key) DO NOTHING
            RETURNING 1
            """, logger: logger)
        var created = false
        for try await _ in rows { created = true }
        if created {
            try await connection.query(
                "INSERT INTO password_history (user_id, password_hash) VALUES (\(userId), \(passwordHash))", logger: logger)
        }
        return created
    }

    package func find(appId: String, orgId: String, email: String) async throws -> Participant? {
        try await Self.first(client.query(
            """
            SELECT \(unescaped: Self.columns) FROM participants
            WHERE app_id = \(appId) AND org_id = \(orgId) AND email_key = \(EmailKey.of(email))
            """, logger: logger))
    }

    package func find(userId: UUID) async throws -> Participant? {
        try await Self.first(client.query(
            "SELECT \(unescaped: Self.columns) FROM participants WHERE user_id = \(userId)", logger: logger))
    }

    /// The account, locked for update in `connection`'s transaction.
    package func lock(userId: UUID, on connection: PostgresConnection) async throws -> Participant? {
        try await Self.first(connection.query(
            "SELECT \(unescaped: Self.columns) FROM participants WHERE user_id = \(userId) FOR UPDATE", logger: logger))
    }

    package func setCode(userId: UUID, hash: String, expiresAt: Date, on connection: PostgresConnection) async throws {
        try await connection.query(
            "UPDATE participants SET code_hash = \(hash), code_expires_at = \(expiresAt) WHERE user_id = \(userId)",
            logger: logger)
    }

    /// Marks the account verified and spends the code.
    package func markVerified(userId: UUID, on connection: PostgresConnection) async throws {
        try await connection.query(
            "UPDATE participants SET verified = true, code_hash = NULL, code_expires_at = NULL WHERE user_id = \(userId)",
            logger: logger)
    }

    /// After a successful login: a used temporary password is spent.
    package func recordLogin(userId: UUID, usedTemporaryPassword: Bool, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participants SET
                temp_password_hash = CASE WHEN \(usedTemporaryPassword) THEN NULL ELSE temp_password_hash END,
                temp_password_expires_at = CASE WHEN \(usedTemporaryPassword) THEN NULL ELSE temp_password_expires_at END
            WHERE user_id = \(userId)
            """, logger: logger)
    }

    package func setTemporaryPassword(userId: UUID, hash: String, expiresAt: Date, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participants SET temp_password_hash = \(hash), temp_password_expires_at = \(expiresAt)
            WHERE user_id = \(userId)
            """, logger: logger)
    }

    /// The newest `count` password hashes, newest first.
    package func recentPasswordHashes(userId: UUID, count: Int, on connection: PostgresConnection) async throws -> [String] {
        let rows = try await connection.query(
            """
            SELECT password_hash FROM password_history WHERE user_id = \(userId)
            ORDER BY created_at DESC LIMIT \(max(count, 1))
            """, logger: logger)
        var hashes: [String] = []
        for try await hash in rows.decode(String.self) { hashes.append(hash) }
        return hashes
    }

    /// Replaces the hash `old` with `new`, of the same password, where the account and its
    /// history hold it: when it was changed meanwhile, nothing is.
    package func rehashPassword(userId: UUID, from old: String, to new: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            "UPDATE participants SET password_hash = \(new) WHERE user_id = \(userId) AND password_hash = \(old)", logger: logger)
        try await connection.query(
            "UPDATE password_history SET password_hash = \(new) WHERE user_id = \(userId) AND password_hash = \(old)", logger: logger)
    }

    /// Sets a new password, spends any temporary one, and records it in the history (which keeps
    /// only what the policy needs).
    package func changePassword(userId: UUID, hash: String, keep history: Int, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participants SET password_hash = \(hash), password_changed_at = now(),
                temp_password_hash = NULL, temp_password_expires_at = NULL
            WHERE user_id = \(userId)
            """, logger: logger)
        try await connection.query(
            "INSERT INTO password_history (user_id, password_hash) VALUES (\(userId), \(hash))", logger: logger)
        try await connection.query(
            """
            DELETE FROM password_history WHERE user_id = \(userId) AND created_at < (
                SELECT min(created_at) FROM (
                    SELECT created_at FROM password_history WHERE user_id = \(userId)
                    ORDER BY created_at DESC LIMIT \(max(history, 1))
                ) kept)
            """, logger: logger)
    }

    /// Disables (`disabled` true) or enables the account; false when it already was so.
    package func setDisabled(userId: UUID, _ disabled: Bool, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query(
            """
            UPDATE participants SET disabled_at = CASE WHEN \(disabled) THEN now() ELSE NULL END
            WHERE user_id = \(userId) AND (disabled_at IS NOT NULL) <> \(disabled)
            RETURNING 1
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    package static func first(_ rows: PostgresRowSequence) async throws -> Participant? {
        for try await row in rows {
            let c = row.makeRandomAccess()
            func column<T: PostgresDecodable>(_ index: Int, _ type: T.Type) throws -> T {
                try c[index].decode(T.self, context: .default)
            }
            return Participant(
                userId: try column(0, UUID.self), appId: try column(1, String.self), orgId: try column(2, String.self),
                email: try column(3, String.self), passwordHash: try column(4, String.self),
                passwordChangedAt: try column(5, Date.self), tempPasswordHash: try column(6, String?.self),
                tempPasswordExpiresAt: try column(7, Date?.self), verified: try column(8, Bool.self),
                codeHash: try column(9, String?.self), codeExpiresAt: try column(10, Date?.self),
                firstName: try column(11, String.self), lastName: try column(12, String.self),
                disabledAt: try column(13, Date?.self))
        }
        return nil
    }
}
