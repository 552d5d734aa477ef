import Synchronization

/// Wakes a waiting queue worker early: new work was queued (a `LISTEN` notification, or a write
/// in this process). A signal with nobody waiting is kept for the next wait, so none is lost
/// between a round ending and the next wait starting. One waiter at a time.
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    public init() {}

    public func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the next signal, or after `timeout`, or when the task is cancelled.
    public func wait(upTo timeout: Duration) async {
        _ = await runBounded(by: timeout) { [self] in
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state -> Bool in
                        // Cancelled before the waiter was in place: the handler found none to resume.
                        if state.pending || Task.isCancelled {
                            state.pending = false
                            return true
                        }
                        state.waiter?.resume()
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }
}
