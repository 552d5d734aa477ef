import Logging
import PostgresNIO

/// What a service's routes and jobs are built from: created once per process.
public struct ServiceEnvironment: Sendable {
    public let descriptor: ServiceDescriptor
    public let settings: ServiceSettings
    public let postgres: PostgresClient
    public let internalClient: InternalClient
    public let metrics: ServiceMetrics
    public let audit: AuditLog
    /// Calls to other services queued with the changes that cause them (see `Outbox`).
    public let outbox: Outbox
    /// Per-minute request limits per client address (or account, or study).
    public let rateLimiter: RateLimiter
    /// Counted tries at passwords and codes, with lockout.
    public let attempts: AttemptCounter
    /// Whether migrations and start-up work have finished.
    public let startup: StartupState
    /// The service's one `LISTEN` connection: queue wake-ups and cache invalidation.
    public let changes: ChangeListener
    public let logger: Logger

    package init(
        descriptor: ServiceDescriptor, settings: ServiceSettings, postgres: PostgresClient, internalClient: InternalClient,
        metrics: ServiceMetrics, audit: AuditLog, outbox: Outbox, rateLimiter: RateLimiter, attempts: AttemptCounter,
        startup: StartupState, changes: ChangeListener, logger: Logger
    ) {
        self.descriptor = descriptor
        self.settings = settings
        self.postgres = postgres
        self.internalClient = internalClient
        self.metrics = metrics
        self.audit = audit
        self.outbox = outbox
        self.rateLimiter = rateLimiter
        self.attempts = attempts
        self.startup = startup
        self.changes = changes
        self.logger = logger
    }

    /// The worker of a queue, run only once the service is ready: woken by `wake` (when this
    /// process queues work) or by a notification on `channel` (when any process does, in the
    /// transaction that queues it), polling as the fallback.
    public func queueWorker(
        _ name: String, channel: String? = nil, wake: WakeSignal = WakeSignal(), timing: QueueWorker.Timing = .init(),
        round: @escaping @Sendable () async throws -> Int
    ) -> QueueWorker {
        if let channel { changes.wake(wake, on: channel) }
        return QueueWorker(
            name, timing: timing, wake: wake, metrics: metrics, isReady: { [startup] in startup.isFinished }, logger: logger,
            round: round)
    }
}
