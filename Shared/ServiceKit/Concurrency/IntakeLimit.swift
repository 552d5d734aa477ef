import Synchronization

/// How many heavy intakes (a result archive opened and read, a large document checked) run at
/// once in one process, and how many may wait for a turn (docs/security.md, Budgets). Each
/// intake's own budget bounds what one holds; this bounds how many hold it together, so a burst
/// of phones, or one attacker with many connections, cannot add their peaks up past the
/// process's memory. Turns are given in arrival order; a caller cancelled while waiting leaves
/// the line.
public final class IntakeLimit: Sendable {
    /// Refused at once: `maxWaiting` callers wait already. A client retries later.
    public struct Busy: Error, Equatable, Sendable, CustomStringConvertible {
        public var running: Int
        public var waiting: Int
        public init(running: Int, waiting: Int) {
            self.running = running
            self.waiting = waiting
        }

        public var description: String { "\(running) intakes are running and \(waiting) waiting; try again shortly" }
    }

    private struct State {
        var running = 0
        var nextTicket = 0
        /// Callers given a place in line who have not yet joined it (between the two locks of
        /// `acquire`): counted, so the line never holds more than `maxWaiting`.
        var joining = 0
        /// Waiting callers by ticket, in arrival order.
        var waiting: [(ticket: Int, turn: CheckedContinuation<Void, any Error>)] = []
    }

    public let maxRunning: Int
    public let maxWaiting: Int
    private let state = Mutex(State())

    public init(maxRunning: Int, maxWaiting: Int) {
        self.maxRunning = max(1, maxRunning)
        self.maxWaiting = max(0, maxWaiting)
    }

    /// Runs `body` once a turn is free; throws `Busy` without waiting when the line is full, and
    /// `CancellationError` when the task is cancelled while it waits.
    public func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// Running now and waiting now, for metrics and tests.
    public var load: (running: Int, waiting: Int) {
        state.withLock { ($0.running, $0.waiting.count + $0.joining) }
    }

    private func acquire() async throws {
        // -1: admitted at once; else the ticket to wait with.
        let ticket: Int = try state.withLock { state throws(Busy) -> Int in
            if state.running < maxRunning, state.waiting.isEmpty, state.joining == 0 {
                state.running += 1
                return -1
            }
            let inLine = state.waiting.count + state.joining
            guard inLine < maxWaiting else { throw Busy(running: state.running, waiting: inLine) }
            state.joining += 1
            state.nextTicket += 1
            return state.nextTicket
        }
        guard ticket >= 0 else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (turn: CheckedContinuation<Void, any Error>) in
                let cancelledBeforeQueued = state.withLock { state -> Bool in
                    state.joining -= 1
                    if Task.isCancelled { return true }
                    // A turn may have come free between the check above and now: the first in
                    // line by ticket takes it.
                    if state.running < maxRunning, state.waiting.isEmpty {
                        state.running += 1
                        turn.resume()
                        return false
                    }
                    // In ticket order: two callers may join in another order than they arrived.
                    let place = state.waiting.firstIndex { $0.ticket > ticket } ?? state.waiting.endIndex
                    state.waiting.insert((ticket, turn), at: place)
                    return false
                }
                if cancelledBeforeQueued { turn.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let removed = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                return state.waiting.remove(at: index).turn
            }
            removed?.resume(throwing: CancellationError())
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            // The turn passes straight to the first in line: `running` stays as it is.
            return state.waiting.removeFirst().turn
        }
        next?.resume()
    }
}
