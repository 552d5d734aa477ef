import Synchronization

/// Wakes a waiting queue worker early: new work was queued (a `LISTEN` notification, or a write
/// in this process). A signal with nobody waiting is kept for the next wait, so none is lost
/// between a round ending and the next wait starting. One waiter at a time.
public final class WakeSignal: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var pending = false
        var waiter: Waiter?
        var nextWaiterID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public func signal() {
        let waiter = state.withLock { state -> Waiter? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.continuation.resume()
    }

    /// Returns at the next signal, or after `timeout`, or when the task is cancelled.
    ///
    /// No continuation is ever resumed while the lock is held. A timed-out wait is cancelled on
    /// another thread, inside the runtime's lock on that wait's task, and its cancellation handler
    /// takes this lock; a new wait resuming the old one under this lock would need the task's
    /// lock in turn, and the two threads would block each other for good.
    public func wait(upTo timeout: Duration) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID &+= 1
            return state.nextWaiterID
        }
        _ = await runBounded(by: timeout) { [self] in
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let (resumeNow, replaced) = state.withLock { state -> (Bool, Waiter?) in
                        // Cancelled before the waiter was in place: the handler found none to resume.
                        if state.pending || Task.isCancelled {
                            state.pending = false
                            return (true, nil)
                        }
                        // A wait that timed out and whose cancellation has not yet reached it.
                        let replaced = state.waiter
                        state.waiter = Waiter(id: id, continuation: continuation)
                        return (false, replaced)
                    }
                    replaced?.continuation.resume()
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                // Only this wait's own continuation: a later wait may already be in its place.
                let waiter = state.withLock { state -> Waiter? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter
                }
                waiter?.continuation.resume()
            }
        }
    }
}
