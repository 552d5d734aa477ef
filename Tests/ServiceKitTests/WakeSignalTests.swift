import Foundation
import ServiceKit
import Synchronization
import Testing

/// The signal that wakes a queue worker early. Every queue worker waits on one between rounds,
/// so a wait that never returns, or that takes the concurrency pool with it, stops the service.
@Suite struct WakeSignalTests {
    @Test func aSignalSentWithNobodyWaitingEndsTheNextWaitAtOnce() async {
        let signal = WakeSignal()
        signal.signal()
        let started = ContinuousClock.now
        await signal.wait(upTo: .seconds(30))
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func aWaitEndsAtItsTimeoutWithoutASignal() async {
        let signal = WakeSignal()
        let started = ContinuousClock.now
        await signal.wait(upTo: .milliseconds(20))
        #expect(ContinuousClock.now - started >= .milliseconds(20))
    }

    @Test func aSignalWakesTheWaiter() async {
        let signal = WakeSignal()
        let started = ContinuousClock.now
        let waiter = Task { await signal.wait(upTo: .seconds(60)) }
        // Whether it lands before or during the wait, the waiter returns long before its timeout.
        signal.signal()
        await waiter.value
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    /// A worker whose wait times out waits again at once, while the timed-out wait is still being
    /// cancelled on another thread. The new wait once resumed the old one while holding the
    /// signal's lock, as the cancellation (holding the old task's lock) asked for the signal's:
    /// both threads of a two-core machine's pool blocked, and study-metadata stopped answering
    /// anything, `/healthz` included. A watchdog on a thread of its own fails the test instead of
    /// letting it hang.
    @Test func timedOutWaitsTakenBackToBackNeverDeadlock() async {
        let done = Atomic(false)
        let watchdog = Thread {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                if done.load(ordering: .acquiring) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            fatalError("WakeSignal deadlocked: timed-out waits taken back to back did not finish in 60 s")
        }
        watchdog.start()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let signal = WakeSignal()
                    for round in 0..<5_000 {
                        if round % 7 == 0 { signal.signal() }
                        await signal.wait(upTo: .microseconds(20))
                    }
                }
            }
        }
        done.store(true, ordering: .releasing)
    }
}
