import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The one `LISTEN` connection of a service: work queues are woken through it when another
/// process (or replica) queues work, and caches are told that what they hold changed.
///
/// Channels are registered while the application is assembled, before it runs. One pooled
/// connection listens on all of them; when it is lost (PostgreSQL restarted, say), every
/// registration hears `listening(false)`, and the listener reconnects with backoff and says
/// `listening(true)` again: a cache must not trust itself while nobody listens, and a queue
/// worker is woken so that it looks for work it may have missed.
public final class ChangeListener: Service, Sendable {
    public struct Registration: Sendable {
        var channel: String
        var notified: @Sendable () -> Void
        var listening: @Sendable (Bool) -> Void
    }

    private let registrations = Mutex<[Registration]>([])
    let client: PostgresClient
    let isReady: @Sendable () -> Bool
    /// False behind a pooler in transaction mode, where a `LISTEN` connection goes back to the
    /// pool: nobody listens, every registration hears `listening(false)` once, and so queues
    /// poll and caches expire on their own.
    let listens: Bool
    let metrics: ServiceMetrics?
    let logger: Logger

    public init(
        client: PostgresClient, isReady: @escaping @Sendable () -> Bool, listens: Bool = true, metrics: ServiceMetrics? = nil,
        logger: Logger
    ) {
        self.client = client
        self.isReady = isReady
        self.listens = listens
        self.metrics = metrics
        self.logger = logger
    }

    /// Calls `notified` for every notification on `channel`, and `listening` when the listener
    /// starts or stops listening.
    public func register(
        channel: String, notified: @escaping @Sendable () -> Void, listening: @escaping @Sendable (Bool) -> Void = { _ in }
    ) {
        registrations.withLock { $0.append(Registration(channel: channel, notified: notified, listening: listening)) }
    }

    /// A wake signal for a queue whose writers call `ChangeListener.notify(channel, on:)`.
    public func wakeSignal(channel: String) -> WakeSignal {
        let signal = WakeSignal()
        wake(signal, on: channel)
        return signal
    }

    /// Signals `signal` on every notification on `channel`, and when listening (re)starts: work
    /// queued while nobody listened would otherwise wait for the next poll.
    public func wake(_ signal: WakeSignal, on channel: String) {
        register(channel: channel, notified: { signal.signal() }, listening: { if $0 { signal.signal() } })
    }

    /// Notifies every listener of `channel` once `connection`'s transaction commits.
    public static func notify(_ channel: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_notify(\(channel), '')", logger: logger)
    }

    public func run() async throws {
        let registrations = self.registrations.withLock { $0 }
        guard !registrations.isEmpty, listens else {
            registrations.forEach { $0.listening(false) }
            // Nothing to listen for; a service that returned would stop the whole application.
            try? await gracefulShutdown()
            return
        }
        let (client, isReady, metrics, logger) = (self.client, self.isReady, self.metrics, self.logger)
        try? await cancelWhenGracefulShutdown {
            var backoff = Duration.milliseconds(500)
            while !Task.isCancelled {
                if !isReady() {
                    try await Task.sleep(for: .milliseconds(200))
                    continue
                }
                let started = ContinuousClock.now
                do {
                    try await client.withConnection { connection in
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            for registration in registrations {
                                group.addTask {
                                    try await connection.listen(on: registration.channel) { notifications in
                                        registration.listening(true)
                                        for try await _ in notifications {
                                            registration.notified()
                                            metrics?.recordChangeNotification(channel: registration.channel)
                                        }
                                    }
                                }
                            }
                            // One channel lost is the connection lost: start over on a new one.
                            try await group.next()
                            group.cancelAll()
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("change listener lost its connection", metadata: ["error": "\(String(reflecting: error))"])
                }
                registrations.forEach { $0.listening(false) }
                // A connection that held for a while was healthy: start the backoff over.
                if ContinuousClock.now - started > .seconds(10) { backoff = .milliseconds(500) }
                try await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(15))
            }
            registrations.forEach { $0.listening(false) }
        }
    }
}
