import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceLifecycle
import StudyModels

/// Delivers queued outbox messages through the signed `InternalClient`.
///
/// Any number of replicas may run it: a batch is claimed with `FOR UPDATE SKIP LOCKED` and leased
/// by moving its next attempt into the future, so a replica that dies mid-delivery only delays its
/// batch by the lease. A message is retried with exponential backoff until the peer answers 2xx,
/// and given up after `maxAttempts` (kept, with its last error, for an operator).
public struct OutboxWorker: Service {
    public struct Policy: Sendable {
        public var pollInterval: Duration
        public var batchSize: Int
        /// How long a claimed message is left alone before another worker may try it.
        public var lease: Duration
        public var maxAttempts: Int
        public var firstBackoff: Duration
        public var maxBackoff: Duration
        /// Delivered messages are deleted after this long.
        public var retention: Duration

        public init(
            pollInterval: Duration = .seconds(1), batchSize: Int = 20, lease: Duration = .seconds(60),
            maxAttempts: Int = 100, firstBackoff: Duration = .seconds(2), maxBackoff: Duration = .seconds(15 * 60),
            retention: Duration = .seconds(7 * 24 * 3600)
        ) {
            self.pollInterval = pollInterval
            self.batchSize = batchSize
            self.lease = lease
            self.maxAttempts = maxAttempts
            self.firstBackoff = firstBackoff
            self.maxBackoff = maxBackoff
            self.retention = retention
        }

        /// The wait before attempt `attempts + 1`: doubling from `firstBackoff`, capped, with ±20% jitter
        /// so that messages that failed together do not retry together.
        public func backoff(afterAttempts attempts: Int) -> Duration {
            let base = Double(firstBackoff.components.seconds) * pow(2, Double(min(max(attempts - 1, 0), 30)))
            let capped = min(base, Double(maxBackoff.components.seconds))
            return .milliseconds(Int64(capped * 1000 * Double.random(in: 0.8...1.2)))
        }
    }

    struct Claimed: Sendable {
        var id: Int64
        var peer: String
        var method: String
        var path: String
        var body: ByteBuffer
        var requestID: String?
        var attempts: Int
    }

    let client: PostgresClient
    let internalClient: InternalClient
    let metrics: ServiceMetrics
    let policy: Policy
    /// Whether the schema is in place; nothing is claimed before.
    let isReady: @Sendable () -> Bool
    let logger: Logger

    public init(
        client: PostgresClient, internalClient: InternalClient, metrics: ServiceMetrics, policy: Policy = Policy(),
        isReady: @escaping @Sendable () -> Bool = { true }, logger: Logger
    ) {
        self.client = client
        self.internalClient = internalClient
        self.metrics = metrics
        self.policy = policy
        self.isReady = isReady
        self.logger = logger
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var lastCleanup = ContinuousClock.now
            while !Task.isCancelled {
                if !isReady() {
                    try await Task.sleep(for: policy.pollInterval)
                    continue
                }
                do {
                    // Drain what is due before sleeping, so a burst is not paced by the poll interval.
                    while try await deliverDue() == policy.batchSize {}
                    if ContinuousClock.now - lastCleanup > .seconds(3600) {
                        try await deleteDelivered()
                        lastCleanup = .now
                    }
                } catch {
                    logger.warning("outbox delivery failed", metadata: ["error": "\(String(reflecting: error))"])
                }
                try await Task.sleep(for: policy.pollInterval)
            }
        }
    }

    /// Claims one batch of due messages and tries each once; returns how many it claimed.
    @discardableResult
    public func deliverDue() async throws -> Int {
        let batch = try await claim()
        // A peer that could not be reached is not tried again in this batch: each try could take
        // the whole request timeout, and the batch's lease must not run out while it waits.
        var unreachable: Set<String> = []
        for message in batch.sorted(by: { $0.id < $1.id }) {
            if unreachable.contains(message.peer) {
                await record(message, outcome: .failed("not tried: \(message.peer) was unreachable"), logger: logger)
            } else if await !deliver(message) {
                unreachable.insert(message.peer)
            }
        }
        return batch.count
    }

    private func claim() async throws -> [Claimed] {
        let leaseSeconds = Double(policy.lease.components.seconds)
        let rows = try await client.query(
            """
            UPDATE internal_outbox o
            SET attempts = o.attempts + 1, next_attempt_at = now() + make_interval(secs => \(leaseSeconds))
            FROM (
                SELECT id FROM internal_outbox
                WHERE delivered_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= now()
                ORDER BY id LIMIT \(policy.batchSize)
                FOR UPDATE SKIP LOCKED
            ) due
            WHERE o.id = due.id
            RETURNING o.id, o.peer, o.method, o.path, o.body, o.request_id, o.attempts
            """, logger: logger)
        var claimed: [Claimed] = []
        for try await (id, peer, method, path, body, requestID, attempts) in rows.decode(
            (Int64, String, String, String, ByteBuffer, String?, Int).self)
        {
            claimed.append(Claimed(
                id: id, peer: peer, method: method, path: path, body: body, requestID: requestID, attempts: attempts))
        }
        return claimed
    }

    /// Tries one message; false when the peer could not be reached at all.
    private func deliver(_ message: Claimed) async -> Bool {
        var logger = self.logger
        logger[metadataKey: "outbox_id"] = "\(message.id)"
        if let requestID = message.requestID { logger[metadataKey: "request_id"] = "\(requestID)" }
        if let peer = ServiceName(rawValue: message.peer) {
            do {
                let response = try await internalClient.send(
                    HTTPMethod(rawValue: message.method), to: peer, path: message.path,
                    body: Array(buffer: message.body), logger: logger)
                if (200..<300).contains(response.status.code) {
                    await record(message, outcome: .delivered, logger: logger)
                } else {
                    let reply = String(buffer: response.body).prefix(200)
                    await record(message, outcome: .failed("answered \(response.status.code): \(reply)"), logger: logger)
                }
                return true
            } catch {
                await record(message, outcome: .failed(String(describing: error)), logger: logger)
                return false
            }
        }
        await record(message, outcome: .failed("unknown peer \(message.peer)"), logger: logger)
        return true
    }

    private enum Outcome {
        case delivered
        case failed(String)
    }

    private func record(_ message: Claimed, outcome: Outcome, logger: Logger) async {
        do {
            switch outcome {
            case .delivered:
                try await client.query(
                    "UPDATE internal_outbox SET delivered_at = now(), last_error = NULL WHERE id = \(message.id)",
                    logger: logger)
                metrics.recordOutboxDelivery(peer: message.peer, outcome: "delivered")
            case .failed(let error) where message.attempts >= policy.maxAttempts:
                try await client.query(
                    "UPDATE internal_outbox SET gave_up_at = now(), last_error = \(error) WHERE id = \(message.id)",
                    logger: logger)
                metrics.recordOutboxDelivery(peer: message.peer, outcome: "gave_up")
                logger.error(
                    "outbox message given up",
                    metadata: ["peer": "\(message.peer)", "path": "\(message.path)", "attempts": "\(message.attempts)",
                               "error": "\(error)"])
            case .failed(let error):
                let backoff = policy.backoff(afterAttempts: message.attempts).components
                let wait = Double(backoff.seconds) + Double(backoff.attoseconds) / 1e18
                try await client.query(
                    """
                    UPDATE internal_outbox
                    SET next_attempt_at = now() + make_interval(secs => \(wait)), last_error = \(error)
                    WHERE id = \(message.id)
                    """, logger: logger)
                metrics.recordOutboxDelivery(peer: message.peer, outcome: "retry")
                logger.warning(
                    "outbox delivery will be retried",
                    metadata: ["peer": "\(message.peer)", "path": "\(message.path)", "attempts": "\(message.attempts)",
                               "error": "\(error)"])
            }
        } catch {
            // The lease runs out and the message is tried again; at-least-once delivery covers it.
            // (At shutdown the write is cancelled; that is expected and not worth a warning.)
            logger.log(
                level: error is CancellationError ? .debug : .warning, "could not record outbox outcome",
                metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    private func deleteDelivered() async throws {
        let seconds = Double(policy.retention.components.seconds)
        try await client.query(
            "DELETE FROM internal_outbox WHERE delivered_at < now() - make_interval(secs => \(seconds))", logger: logger)
    }
}
