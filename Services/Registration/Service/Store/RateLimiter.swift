import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Counts requests per (action, client address) in one-minute windows kept in PostgreSQL, so the
/// limit holds across replicas. The limit applies to a sliding minute, estimated from the current
/// window and the share of the previous one still inside it (a burst across a window boundary is
/// not allowed twice). Old windows are deleted by a periodic job.
struct RateLimiter: Sendable {
    let client: PostgresClient
    let perMinute: Int
    /// How a request's client address is told (the peer, or what a trusted proxy forwarded).
    let addresses: ClientAddressResolver
    let logger: Logger

    /// Counts one request; false when the bucket is over its limit for this minute.
    func allow(_ action: String, from address: String, now: Date = Date()) async throws -> Bool {
        let seconds = now.timeIntervalSince1970
        let window = Date(timeIntervalSince1970: (seconds / 60).rounded(.down) * 60)
        let previous = window.addingTimeInterval(-60)
        let bucket = "\(action)|\(address)"
        let rows = try await client.query(
            """
            WITH hit AS (
                INSERT INTO rate_limit_windows (bucket, window_start, hits) VALUES (\(bucket), \(window), 1)
                ON CONFLICT (bucket, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
                RETURNING hits
            )
            SELECT (SELECT hits FROM hit),
                   coalesce((SELECT hits FROM rate_limit_windows WHERE bucket = \(bucket) AND window_start = \(previous)), 0)
            """, logger: logger)
        for try await (current, before) in rows.decode((Int, Int).self) {
            let elapsed = seconds - window.timeIntervalSince1970
            return Double(current) + Double(before) * (1 - elapsed / 60) <= Double(perMinute)
        }
        return true
    }

    func deleteOldWindows() async throws {
        try await client.query(
            "DELETE FROM rate_limit_windows WHERE window_start < now() - interval '5 minutes'", logger: logger)
    }
}
