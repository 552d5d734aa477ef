import Synchronization

/// How a piece of work bounded by a deadline ended.
public enum BoundedOutcome<Value: Sendable>: Sendable {
    case finished(Value)
    case failed(any Error)
    /// The deadline passed first. The work was cancelled; if it ignores cancellation (an await
    /// that never returns, as a database client's can when its connection dies mid-query) it is
    /// left behind, and the caller goes on without it.
    case timedOut
    /// The caller itself was cancelled (shutting down), and the work did not end within the grace.
    case cancelled
}

/// Runs `work` in a task of its own and waits for it for at most `deadline`.
///
/// When the caller is cancelled, the work is cancelled too and given up to `grace` to end (work
/// that stops at a safe point, as a queue round does between items); what it ends with is the
/// outcome. Unlike a task group, this never waits for cancelled work past that: a round of a
/// queue worker that hangs must not take the worker with it.
public func runBounded<Value: Sendable>(
    by deadline: Duration, grace: Duration = .zero, _ work: @escaping @Sendable () async throws -> Value
) async -> BoundedOutcome<Value> {
    let race = FirstOutcome<Value>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<BoundedOutcome<Value>, Never>) in
            race.install(continuation)
            let worker = Task {
                do {
                    race.settle(.finished(try await work()))
                } catch {
                    // Cancelled work fails with whatever wraps the cancellation (a transaction's
                    // error, say): that is the shutdown or the deadline, not a failure.
                    race.settle(error is CancellationError || Task.isCancelled ? .cancelled : .failed(error))
                }
            }
            let timer = Task {
                try? await Task.sleep(for: deadline)
                if !Task.isCancelled, race.settle(.timedOut) { worker.cancel() }
            }
            race.onSettle { timer.cancel() }
            race.onCancel {
                worker.cancel()
                guard grace > .zero else {
                    race.settle(.cancelled)
                    return
                }
                let graceTimer = Task {
                    try? await Task.sleep(for: grace)
                    if !Task.isCancelled { race.settle(.cancelled) }
                }
                race.onSettle { graceTimer.cancel() }
            }
        }
    } onCancel: {
        race.cancel()
    }
}

/// Thrown by `withDeadline` when the operation did not finish in time.
public struct DeadlineExceeded: Error, Sendable {}

/// Runs `operation`, cancelling it and throwing `DeadlineExceeded` once `duration` has passed;
/// `runBounded` as a throwing call, for a probe or a scrape that only wants the answer or an error.
///
/// The answer comes at the deadline even when the operation ignores its cancellation (a pool
/// waiting for a database that accepts no connection): a task group would wait for its child to
/// finish, and so would the health check asking.
public func withDeadline<T: Sendable>(
    _ duration: Duration, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    switch await runBounded(by: duration, operation) {
    case .finished(let value): return value
    case .failed(let error): throw error
    case .timedOut: throw DeadlineExceeded()
    case .cancelled: throw CancellationError()
    }
}

/// The first of several outcomes to arrive, handed to one continuation exactly once.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<BoundedOutcome<Value>, Never>?
        var outcome: BoundedOutcome<Value>?
        var settled = false
        var cancelRequested = false
        var settleHandlers: [@Sendable () -> Void] = []
        var cancelHandlers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<BoundedOutcome<Value>, Never>) {
        let ready: BoundedOutcome<Value>? = state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Settles with `outcome` unless already settled; true when this call settled it.
    @discardableResult
    func settle(_ outcome: BoundedOutcome<Value>) -> Bool {
        let (won, continuation, handlers) = state.withLock { state -> (Bool, CheckedContinuation<BoundedOutcome<Value>, Never>?, [@Sendable () -> Void]) in
            guard !state.settled else { return (false, nil, []) }
            state.settled = true
            state.outcome = outcome
            let continuation = state.continuation
            state.continuation = nil
            let handlers = state.settleHandlers
            state.settleHandlers = []
            return (true, continuation, handlers)
        }
        continuation?.resume(returning: outcome)
        handlers.forEach { $0() }
        return won
    }

    func onSettle(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.settled { return true }
            state.settleHandlers.append(handler)
            return false
        }
        if now { handler() }
    }

    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.cancelRequested { return true }
            state.cancelHandlers.append(handler)
            return false
        }
        if now { handler() }
    }

    /// The caller was cancelled: the cancel handlers cancel the work and settle, at once or after
    /// the grace.
    func cancel() {
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            state.cancelRequested = true
            let handlers = state.cancelHandlers
            state.cancelHandlers = []
            return handlers
        }
        handlers.forEach { $0() }
    }
}
