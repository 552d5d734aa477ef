import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Delivers queued outbox messages through the signed `InternalClient`, as a `QueueWorker`.
///
/// Any number of replicas may run it: a batch is claimed with `FOR UPDATE SKIP LOCKED` and leased
/// by moving its next attempt into the future, so a replica that dies mid-delivery only delays its
/// batch by the lease. A message is retried with backoff until the peer answers 2xx, and given
/// up after `maxAttempts` (kept, with its last error, for an operator).
public struct OutboxWorker: Service {
    /// The defaults: batches of 20 leased for a minute, 100 attempts, 2 s doubling to 15 minutes,
    /// eight calls of a batch at once. Delivery was never ordered (a message retried arrives after
    /// later ones; receivers go by the versions and times the calls carry), and one call at a time
    /// held a study's recount of every participant's weeks to one round trip after another
    /// (docs/operations.md, Capacity).
    public static func policy(
        batchSize: Int = 20, maxAttempts: Int = 100, firstBackoff: Duration = .seconds(2), atOnce: Int = 8
    ) -> DrainPolicy {
        DrainPolicy(
            batchSize: batchSize, lease: .seconds(60), retry: RetryPolicy(maxAttempts: maxAttempts, firstBackoff: firstBackoff),
            atOnce: atOnce)
    }

    /// Delivered messages are deleted after a week.
    static let retention: Duration = .seconds(7 * 24 * 3600)

    let queue: OutboxQueue
    let worker: QueueWorker

    public init(
        client: PostgresClient, internalClient: InternalClient, metrics: ServiceMetrics, policy: DrainPolicy = Self.policy(),
        timing: QueueWorker.Timing = .init(roundDeadline: .seconds(45)), wake: WakeSignal = WakeSignal(),
        isReady: @escaping @Sendable () -> Bool = { true }, logger: Logger
    ) {
        let queue = OutboxQueue(client: client, internalClient: internalClient, policy: policy, metrics: metrics, logger: logger)
        let lastCleanup = Mutex(ContinuousClock.now)
        self.queue = queue
        worker = QueueWorker(
            queue.queueName, timing: timing, wake: wake, metrics: metrics, isReady: isReady, logger: logger
        ) {
            let took = try await queue.round()
            if lastCleanup.withLock({ ContinuousClock.now - $0 > .seconds(3600) }) {
                try await queue.deleteDelivered(olderThan: Self.retention)
                lastCleanup.withLock { $0 = .now }
            }
            return took
        }
    }

    public func run() async throws {
        try await worker.run()
    }

    /// Claims one batch of due messages and tries each once; returns how many it claimed.
    @discardableResult
    public func round() async throws -> Int {
        try await queue.round()
    }
}

/// The `internal_outbox` table as a work queue.
final class OutboxQueue: WorkQueue {
    struct Message: Sendable {
        var id: Int64
        var peer: String
        var method: String
        var path: String
        var body: ByteBuffer
        var requestID: String?
        var attempts: Int
    }

    let queueName = "internal_outbox"
    let client: PostgresClient
    let internalClient: InternalClient
    let policy: DrainPolicy
    let metrics: ServiceMetrics
    let logger: Logger
    /// Peers that could not be reached in this round: the rest of their batch is not tried, as
    /// each try could take the whole request timeout and the batch's lease must not run out.
    private let unreachable = Mutex<Set<String>>([])

    init(client: PostgresClient, internalClient: InternalClient, policy: DrainPolicy, metrics: ServiceMetrics, logger: Logger) {
        self.client = client
        self.internalClient = internalClient
        self.policy = policy
        self.metrics = metrics
        self.logger = logger
    }

    func claim(limit: Int, lease: Duration) async throws -> [Message] {
        unreachable.withLock { $0.removeAll() }
        let rows = try await client.query(
            Outbox.table.claim(returning: "q.peer, q.method, q.path, q.body, q.request_id", limit: limit, lease: lease), logger: logger)
        var claimed: [Message] = []
        for try await (id, attempts, peer, method, path, body, requestID) in rows.decode(
            (Int64, Int, String, String, String, ByteBuffer, String?).self)
        {
            claimed.append(Message(
                id: id, peer: peer, method: method, path: path, body: body, requestID: requestID, attempts: attempts))
        }
        return claimed.sorted { $0.id < $1.id }
    }

    func attempts(of message: Message) -> Int { message.attempts }

    func perform(_ message: Message) async -> WorkResult<Void> {
        guard let peer = ServiceName(rawValue: message.peer) else { return .rejected("unknown peer \(message.peer)") }
        if unreachable.withLock({ $0.contains(message.peer) }) {
            return .failed("not tried: \(message.peer) was unreachable")
        }
        var logger = self.logger
        logger[metadataKey: "outbox_id"] = "\(message.id)"
        if let requestID = message.requestID { logger[metadataKey: "request_id"] = "\(requestID)" }
        do {
            let response = try await internalClient.send(
                HTTPMethod(rawValue: message.method), to: peer, path: message.path, body: Array(buffer: message.body),
                logger: logger)
            guard (200..<300).contains(response.status.code) else {
                return .failed("answered \(response.status.code): \(String(buffer: response.body).prefix(200))")
            }
            return .done(())
        } catch {
            unreachable.withLock { _ = $0.insert(message.peer) }
            return .failed(String(describing: error))
        }
    }

    func complete(_ message: Message, with _: Void) async throws {
        try await client.query(Outbox.table.complete(id: message.id), logger: logger)
    }

    func fail(_ message: Message, reason: String, retryAfter: Duration?) async throws {
        try await client.query(Outbox.table.fail(id: message.id, reason: reason, retryAfter: retryAfter), logger: logger)
    }

    func deleteDelivered(olderThan retention: Duration) async throws {
        try await client.query(Outbox.table.deleteSent(olderThan: retention), logger: logger)
    }
}
