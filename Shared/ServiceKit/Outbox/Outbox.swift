import Foundation
import Logging
import NIOHTTP1
import PostgresNIO

/// Calls to other services that must happen because of a change in this one.
///
/// A message is written in the same transaction as the change that causes it, so nothing is sent
/// for a change that rolls back, and nothing is lost when the peer is down: `OutboxWorker` delivers
/// it once that transaction commits, retrying with backoff until the peer accepts it.
/// Delivery is at least once and not ordered across messages, so receivers must be idempotent
/// (the StudyStack internal endpoints carry versions and ids for that).
public struct Outbox: Sendable {
    /// The `internal_outbox` table, of the shared queue shape (`QueueTable`, which also gives its
    /// depth for `/metrics`).
    public static let table = QueueTable("internal_outbox", sentColumn: "delivered_at")

    /// One queued call, as operators and tests see it.
    public struct Message: Codable, Sendable, Equatable {
        public var id: Int64
        public var peer: String
        public var method: String
        public var path: String
        public var attempts: Int
        public var lastError: String?
        public var createdAt: Date
        public var deliveredAt: Date?
        public var gaveUpAt: Date?
    }

    /// Notified when a message is queued, so that the worker starts on it at once.
    public static let channel = "studystack_queue_internal_outbox"

    let client: PostgresClient
    let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Queues a call of `endpoint` (its path built from `parameters`) in `connection`'s transaction,
    /// and wakes the workers when it commits. `wakingWorkers: false` leaves them to a later
    /// `wakeWorkers()` (or their next poll): a transaction that notifies takes PostgreSQL's one
    /// notify lock at its commit and holds it through the commit's flush, so every such commit of
    /// the cluster waits for the one before (a sweep writing thousands a second waits on it).
    public func enqueue<Body, Reply>(
        _ endpoint: InternalEndpoint<Body, Reply>, _ parameters: [String: String] = [:], payload: Body,
        wakingWorkers: Bool = true, on connection: PostgresConnection
    ) async throws {
        let path = try endpoint.path(parameters)
        let body = ByteBuffer(bytes: try payload.wireBytes())
        let requestID = logger[metadataKey: "request_id"].map { "\($0)" }
        try await connection.query(
            """
            INSERT INTO internal_outbox (peer, method, path, body, request_id)
            VALUES (\(endpoint.receiver.rawValue), \(endpoint.method.rawValue), \(path), \(body), \(requestID))
            """, logger: logger)
        if wakingWorkers { try await ChangeListener.notify(Self.channel, on: connection, logger: logger) }
    }

    /// Wakes every replica's worker for what was queued without waking them: a notification of
    /// its own, outside any transaction that writes (so its commit flushes nothing).
    public func wakeWorkers() async throws {
        try await client.withConnection { connection in
            try await ChangeListener.notify(Self.channel, on: connection, logger: logger)
        }
    }

    /// Messages not yet delivered (including those given up on), oldest first.
    public func undelivered(limit: Int = 100) async throws -> [Message] {
        try await messages(
            """
            SELECT id, peer, method, path, attempts, last_error, created_at, delivered_at, gave_up_at
            FROM internal_outbox WHERE delivered_at IS NULL ORDER BY id LIMIT \(min(max(limit, 1), 1000))
            """)
    }

    /// The newest messages, delivered or not.
    public func recent(limit: Int = 100) async throws -> [Message] {
        try await messages(
            """
            SELECT id, peer, method, path, attempts, last_error, created_at, delivered_at, gave_up_at
            FROM internal_outbox ORDER BY id DESC LIMIT \(min(max(limit, 1), 1000))
            """)
    }

    private func messages(_ query: PostgresQuery) async throws -> [Message] {
        let rows = try await client.query(query, logger: logger)
        var found: [Message] = []
        for try await (id, peer, method, path, attempts, error, created, delivered, gaveUp) in rows.decode(
            (Int64, String, String, String, Int, String?, Date, Date?, Date?).self)
        {
            found.append(Message(
                id: id, peer: peer, method: method, path: path, attempts: attempts, lastError: error,
                createdAt: created, deliveredAt: delivered, gaveUpAt: gaveUp))
        }
        return found
    }
}
