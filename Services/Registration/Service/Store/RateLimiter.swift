import Foundation
import Logging
import PostgresNIO

/// Counts requests per (action, client address) in fixed one-minute windows kept in PostgreSQL,
/// so the limit holds across replicas. Old windows are deleted by a periodic job.
struct RateLimiter: Sendable {
    let client: PostgresClient
    let perMinute: Int
    let logger: Logger

    /// Counts one request; false when the bucket is over its limit for this minute.
    func allow(_ action: String, from address: String, now: Date = Date()) async throws -> Bool {
        let window = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 60).rounded(.down) * 60)
        let rows = try await client.query(
            """
            INSERT INTO rate_limit_windows (bucket, window_start, hits) VALUES (\("\(action)|\(address)"), \(window), 1)
            ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
            RETURNING hits
            """, logger: logger)
        for try await hits in rows.decode(Int.self) { return hits <= perMinute }
        return true
    }

    func deleteOldWindows() async throws {
        try await client.query(
            "DELETE FROM rate_limit_windows WHERE window_start < now() - interval '5 minutes'", logger: logger)
    }
}
