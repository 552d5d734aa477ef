import Logging
import ServiceLifecycle

/// The one loop every StudyStack work queue runs on (the internal outbox, mail, push,
/// notification dispatch, response processing and forwarding).
///
/// Once the service is ready it runs rounds: a round takes due work and returns how much it
/// took; while rounds find work they follow one another, and once one finds none the worker
/// waits for its wake signal (a `LISTEN` notification or a write in this process) or the poll
/// interval, whichever comes first. Polling is the fallback that makes a lost notification, or
/// work that becomes due by the clock, only late, never stuck.
///
/// Every round is bounded by a deadline. A round that fails is logged and the worker goes on
/// after the poll interval; a round that passes its deadline (an await that never returns, as a
/// database call can when its connection dies under it) is cancelled and left behind, logged as
/// an error and counted, and the next round starts. `/metrics` shows each worker's last
/// completed round (`studystack_queue_last_round_timestamp_seconds`) so an operator can alert
/// on a worker that stops.
///
/// On graceful shutdown the round in progress is cancelled and given `shutdownGrace` to stop at
/// a safe point: a round of `WorkQueue.drain` finishes the item in hand, and records it, first.
public struct QueueWorker: Service {
    public struct Timing: Sendable {
        public var pollInterval: Duration
        /// The most a round may take; past it the round is abandoned.
        public var roundDeadline: Duration

        /// How long a round in progress when the service is asked to stop may take to reach a
        /// safe point (its item in hand done and recorded); well inside the time a pod is given
        /// between SIGTERM and SIGKILL (40 s in the Kubernetes manifests).
        public var shutdownGrace: Duration

        public init(pollInterval: Duration = .seconds(1), roundDeadline: Duration = .seconds(120), shutdownGrace: Duration = .seconds(10)) {
            self.pollInterval = pollInterval
            self.roundDeadline = roundDeadline
            self.shutdownGrace = shutdownGrace
        }
    }

    let name: String
    let timing: Timing
    let wake: WakeSignal
    let isReady: @Sendable () -> Bool
    let metrics: ServiceMetrics
    let logger: Logger
    let round: @Sendable () async throws -> Int

    /// `name` labels the worker's logs and metrics; `round` does one round and returns how many
    /// items it took (0: nothing was due).
    public init(
        _ name: String, timing: Timing = Timing(), wake: WakeSignal = WakeSignal(), metrics: ServiceMetrics,
        isReady: @escaping @Sendable () -> Bool, logger: Logger, round: @escaping @Sendable () async throws -> Int
    ) {
        self.name = name
        self.timing = timing
        self.wake = wake
        self.isReady = isReady
        self.metrics = metrics
        self.logger = logger
        self.round = round
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                guard isReady() else {
                    await wake.wait(upTo: timing.pollInterval)
                    continue
                }
                let took = await runRound()
                if Task.isCancelled { return }
                // More may be due: go straight on. Otherwise wait for a wake-up or the poll.
                if took == nil || took == 0 { await wake.wait(upTo: timing.pollInterval) }
            }
        }
    }

    /// One bounded round: how many items it took, or nil when it failed or timed out.
    @discardableResult
    public func runRound() async -> Int? {
        switch await runBounded(by: timing.roundDeadline, grace: timing.shutdownGrace, round) {
        case .finished(let took):
            metrics.recordQueueRound(worker: name, outcome: "completed")
            return took
        case .failed(let error):
            metrics.recordQueueRound(worker: name, outcome: "failed")
            logger.warning("\(name) round failed", metadata: ["worker": "\(name)", "error": "\(String(reflecting: error))"])
            return nil
        case .timedOut:
            metrics.recordQueueRound(worker: name, outcome: "timed_out")
            logger.error(
                "\(name) round passed its deadline and was abandoned",
                metadata: ["worker": "\(name)", "deadline": "\(timing.roundDeadline)"])
            return nil
        case .cancelled:
            return nil
        }
    }
}
