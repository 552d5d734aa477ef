import Logging

/// A durable queue of items that are claimed, worked on and settled: the shape shared by the
/// internal outbox, mail, push, response processing and forwarding. Each queue's store owns its
/// SQL (its table and columns differ); this protocol and `drain` own the order of things, the
/// retry decision and the counting.
///
/// Claiming must lease: a claimed item is not claimed again until its lease ends (a
/// `FOR UPDATE SKIP LOCKED` pick that moves its next attempt past the lease), so replicas share
/// a queue and a worker that dies mid-item only delays that item.
public protocol WorkQueue: Sendable {
    associatedtype Item: Sendable
    /// What a completed item's work produced, for `complete`.
    associatedtype Completion: Sendable = Void

    /// The queue's name in logs and in `studystack_queue_items_total{queue}`.
    var queueName: String { get }
    /// A round's batch size and lease, and the retries of a failed item.
    var policy: DrainPolicy { get }
    var metrics: ServiceMetrics { get }
    var logger: Logger { get }

    /// One round, the worker's one way in (`QueueWorker`): by default `drain` with the queue's
    /// own name and policy. A queue that works its batches its own way (response processing)
    /// gives its own, settling each item with `settle`.
    func round() async throws -> Int

    /// Claims up to `limit` due items, each leased for `lease`, oldest first.
    func claim(limit: Int, lease: Duration) async throws -> [Item]
    /// How many times `item` has been claimed, this claim included.
    func attempts(of item: Item) -> Int
    /// Does `item`'s work once.
    func perform(_ item: Item) async -> WorkResult<Completion>
    /// Records that `item` is done.
    func complete(_ item: Item, with completion: Completion) async throws
    /// The `outcome` label a completion is counted under ("done" unless the queue says more).
    func outcome(of completion: Completion) -> String
    /// Records a failed attempt: tried again after `retryAfter`, or given up when it is nil.
    func fail(_ item: Item, reason: String, retryAfter: Duration?) async throws
    /// Records that `item` failed its last allowed attempt (`attempts`, the policy's limit) for a
    /// reason that might yet have changed: by default as a failure given up.
    func giveUp(_ item: Item, reason: String, attempts: Int) async throws
}

/// What one attempt at an item came to.
public enum WorkResult<Completion: Sendable>: Sendable {
    case done(Completion)
    /// Worth trying again later (a peer down, a timeout).
    case failed(String)
    /// Never worth trying again (a refusal that will not change).
    case rejected(String)
}

/// How a queue is drained: batch size, lease, retries, and how many of a batch are worked on at
/// once (1: in order, one after another).
public struct DrainPolicy: Sendable {
    public var batchSize: Int
    public var lease: Duration
    public var retry: RetryPolicy
    public var atOnce: Int

    public init(batchSize: Int, lease: Duration, retry: RetryPolicy, atOnce: Int = 1) {
        self.batchSize = batchSize
        self.lease = lease
        self.retry = retry
        self.atOnce = max(1, atOnce)
    }
}

extension WorkQueue {
    public func outcome(of completion: Completion) -> String { "done" }

    @discardableResult
    public func round() async throws -> Int {
        try await drain(queueName, policy: policy, metrics: metrics, logger: logger)
    }

    public func giveUp(_ item: Item, reason: String, attempts: Int) async throws {
        try await fail(item, reason: reason, retryAfter: nil)
    }

    /// One round: claims a batch, works on each item and settles it (`settle`), `policy.atOnce` at
    /// a time (one: in the order claimed). Returns how many were claimed. Outcomes are counted as
    /// `studystack_queue_items_total{queue, outcome}`.
    ///
    /// A round that is cancelled (the worker is stopping) stops between items. An item in hand is
    /// finished first, its work and its record, in a task of its own that the cancellation does not
    /// reach: its work may already have left (a push APNs has accepted, a message the relay has
    /// taken), and cancelling the record would leave it leased, to be done again once the lease
    /// ends. The items not begun stay leased until then.
    public func drain(
        _ queue: String, policy: DrainPolicy, metrics: ServiceMetrics, logger: Logger
    ) async throws -> Int {
        let batch = try await claim(limit: policy.batchSize, lease: policy.lease)
        try await concurrentForEach(batch, atMost: policy.atOnce) { item in
            try Task.checkCancellation()
            try await Task {
                try await settle(item, with: await perform(item), queue: queue, policy: policy, metrics: metrics, logger: logger)
            }.value
        }
        return batch.count
    }

    /// Records what an attempt at `item` came to: done, tried again after the policy's wait, or
    /// given up; and counts it. `drain` settles each item so, as does a queue that works its
    /// batches its own way (response processing).
    ///
    /// The record is made even when PostgreSQL goes away under it (see `recording`): the work is
    /// done, and an item left unrecorded would be done again once its lease ends.
    public func settle(
        _ item: Item, with result: WorkResult<Completion>, queue: String, policy: DrainPolicy, metrics: ServiceMetrics,
        logger: Logger
    ) async throws {
        let attempts = attempts(of: item)
        let reason: String
        let permanent: Bool
        let recordBy = ContinuousClock.now + policy.lease
        switch result {
        case .done(let completion):
            try await recording(queue, by: recordBy, logger: logger) { try await complete(item, with: completion) }
            metrics.recordQueueItem(queue: queue, outcome: outcome(of: completion))
            return
        case .failed(let why):
            (reason, permanent) = (why, false)
        case .rejected(let why):
            (reason, permanent) = (why, true)
        }
        switch policy.retry.afterFailure(attempts: attempts, permanent: permanent) {
        case .retry(let wait):
            try await recording(queue, by: recordBy, logger: logger) { try await fail(item, reason: reason, retryAfter: wait) }
            metrics.recordQueueItem(queue: queue, outcome: "retry")
            logger.warning(
                "\(queue) item will be retried",
                metadata: ["queue": "\(queue)", "attempts": "\(attempts)", "retry_in": "\(wait)", "error": "\(reason)"])
        case .giveUp:
            try await recording(queue, by: recordBy, logger: logger) {
                if permanent {
                    try await fail(item, reason: reason, retryAfter: nil)
                } else {
                    try await giveUp(item, reason: reason, attempts: attempts)
                }
            }
            // Refused outright, or out of attempts.
            metrics.recordQueueItem(queue: queue, outcome: permanent ? "rejected" : "gave_up")
            logger.log(
                level: permanent ? .warning : .error, permanent ? "\(queue) item rejected" : "\(queue) item given up",
                metadata: ["queue": "\(queue)", "attempts": "\(attempts)", "error": "\(reason)"])
        }
    }

    /// Runs `record`, again and again while PostgreSQL cannot be reached (a restart, a failover, a
    /// pooler that lost its server), waiting 100 ms doubling to 2 s between tries, until `deadline`.
    /// Any other error, or the deadline, ends it with the error.
    func recording(
        _ queue: String, by deadline: ContinuousClock.Instant, logger: Logger, _ record: () async throws -> Void
    ) async throws {
        var wait = Duration.milliseconds(100)
        while true {
            do {
                return try await record()
            } catch where PostgresErrors.isUnavailable(error) && ContinuousClock.now + wait < deadline {
                logger.warning(
                    "\(queue) item's outcome could not be recorded yet; trying again",
                    metadata: ["queue": "\(queue)", "retry_in": "\(wait)", "error": "\(String(reflecting: error))"])
                try await Task.sleep(for: wait)
                wait = min(wait * 2, .seconds(2))
            }
        }
    }
}
