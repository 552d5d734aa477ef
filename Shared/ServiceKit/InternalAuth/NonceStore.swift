import Foundation
import Logging
import PostgresNIO

/// Remembers the nonces of accepted internal requests in PostgreSQL, so a replay is refused
/// by whichever replica receives it.
public struct NonceStore: Sendable {
    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Records `nonce` for `caller` until `expiresAt`; false when it was already recorded.
    public func remember(caller: String, nonce: String, expiresAt: Date) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO internal_request_nonces (caller, nonce, expires_at)
            VALUES (\(caller), \(nonce), \(expiresAt))
            ON CONFLICT (caller, nonce) DO NOTHING
            RETURNING 1
            """,
            logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Forgets nonces whose requests could no longer pass the timestamp check.
    @discardableResult
    public func deleteExpired(now: Date = Date()) async throws -> Int {
        let rows = try await client.query(
            "DELETE FROM internal_request_nonces WHERE expires_at < \(now) RETURNING 1", logger: logger)
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }
}
