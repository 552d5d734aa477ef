import Synchronization
import Logging
import PostgresNIO

/// Answers `/readyz`: the database answers within a short time and every migration of this
/// binary is recorded. Nothing is cached, so readiness follows the database both ways.
public struct ReadinessProbe: Sendable {
    let service: ServiceName
    let migrator: Migrator
    let timeout: Duration
    let startup: StartupState?
    let logger: Logger

    public init(
        service: ServiceName, migrator: Migrator, startup: StartupState? = nil, timeout: Duration = .seconds(2),
        logger: Logger
    ) {
        self.service = service
        self.migrator = migrator
        self.startup = startup
        self.timeout = timeout
        self.logger = logger
    }

    public func check() async -> ReadinessReport {
        if let startup, !startup.isFinished {
            return ReadinessReport(ready: false, service: service.rawValue, reason: "starting up: applying migrations")
        }
        do {
            let pending = try await withDeadline(timeout) { try await migrator.pending() }
            guard pending.isEmpty else {
                return ReadinessReport(
                    ready: false, service: service.rawValue, reason: "migrations pending",
                    pendingMigrations: pending.map(\.label))
            }
            return ReadinessReport(ready: true, service: service.rawValue)
        } catch is DeadlineExceeded {
            return ReadinessReport(
                ready: false, service: service.rawValue, reason: "database did not answer within \(timeout)")
        } catch {
            logger.warning("readiness check failed", metadata: ["error": "\(String(reflecting: error))"])
            return ReadinessReport(ready: false, service: service.rawValue, reason: "database unreachable")
        }
    }
}

/// Thrown by `withDeadline` when the operation did not finish in time.
public struct DeadlineExceeded: Error, Sendable {}

/// Runs `operation`, cancelling it and throwing `DeadlineExceeded` once `duration` has passed.
///
/// The answer comes at the deadline even when the operation ignores its cancellation (a pool
/// waiting for a database that accepts no connection): a task group would wait for its child to
/// finish, and so would the health check asking.
public func withDeadline<T: Sendable>(
    _ duration: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = DeadlineOutcome<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            outcome.start(continuation)
            let work = Task {
                do { outcome.finish(.success(try await operation())) } catch { outcome.finish(.failure(error)) }
            }
            outcome.onFinish { work.cancel() }
            Task {
                try? await Task.sleep(for: duration)
                outcome.finish(.failure(DeadlineExceeded()))
            }
        }
    } onCancel: {
        outcome.finish(.failure(CancellationError()))
    }
}

/// The first of the operation, the deadline and cancellation to finish resumes the caller; the
/// others find it done.
private final class DeadlineOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var early: Result<T, any Error>?
        var finished = false
        var onFinish: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let finished = state.withLock { state -> Bool in
            if state.finished { return true }
            state.onFinish = action
            return false
        }
        if finished { action() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, action) = state.withLock { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            if state.continuation == nil { state.early = result }
            defer { state.continuation = nil }
            return (state.continuation, state.onFinish)
        }
        continuation?.resume(with: result)
        action?()
    }
}
