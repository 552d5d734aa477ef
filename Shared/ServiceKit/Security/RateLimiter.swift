import Crypto
import Foundation
import Logging
import PostgresNIO

/// Counts requests per (action, key) in one-minute windows kept in PostgreSQL, so a limit holds
/// across replicas. The key is usually the client address, sometimes an account or a study. The
/// limit applies to a sliding minute, estimated from the current window and the share of the
/// previous one still inside it (a burst across a window boundary is not allowed twice). Old
/// windows are deleted by a periodic job every service runs.
public struct RateLimiter: Sendable {
    let client: PostgresClient
    /// The default allowance per minute (`RATE_LIMIT_PER_MINUTE`), for callers that name none.
    public let perMinute: Int
    /// How a request's client address is told (the peer, or what a trusted proxy forwarded).
    public let addresses: ClientAddressResolver
    let logger: Logger

    public init(client: PostgresClient, perMinute: Int, addresses: ClientAddressResolver, logger: Logger) {
        self.client = client
        self.perMinute = perMinute
        self.addresses = addresses
        self.logger = logger
    }

    /// Counts one request; false when the bucket is over `limit` (the default allowance when
    /// nil) for this minute.
    public func allow(_ action: String, from key: String, limit: Int? = nil, now: Date = Date()) async throws -> Bool {
        let allowance = limit ?? perMinute
        let seconds = now.timeIntervalSince1970
        let window = Date(timeIntervalSince1970: (seconds / 60).rounded(.down) * 60)
        let previous = window.addingTimeInterval(-60)
        let bucket = "\(action)|\(Self.bounded(key))"
        let rows = try await client.query(
            """
            WITH hit AS (
                INSERT INTO request_rate_windows (bucket, window_start, hits) VALUES (\(bucket), \(window), 1)
                ON CONFLICT (bucket, window_start) DO UPDATE SET hits = request_rate_windows.hits + 1
                RETURNING hits
            )
            SELECT (SELECT hits FROM hit),
                   coalesce((SELECT hits FROM request_rate_windows WHERE bucket = \(bucket) AND window_start = \(previous)), 0)
            """, logger: logger)
        for try await (current, before) in rows.decode((Int, Int).self) {
            let elapsed = seconds - window.timeIntervalSince1970
            return Double(current) + Double(before) * (1 - elapsed / 60) <= Double(allowance)
        }
        return true
    }

    /// Keys a caller chose (an e-mail, a study id) can be as long as a request body: past 100
    /// bytes a key is counted under its SHA-256, so a bucket row stays small.
    static func bounded(_ key: String) -> String {
        guard key.utf8.count > 100 else { return key }
        return "sha256:" + SHA256.hash(data: Data(key.utf8)).hexString
    }

    public func deleteOldWindows() async throws {
        try await client.query(
            "DELETE FROM request_rate_windows WHERE window_start < now() - interval '5 minutes'", logger: logger)
    }
}
