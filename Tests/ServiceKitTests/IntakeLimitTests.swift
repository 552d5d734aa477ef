import ServiceKit
import Synchronization
import Testing

/// Heavy intakes take turns (docs/security.md, Budgets): never more at once than the limit, in
/// arrival order, refused at once when the line is full, and a caller cancelled while waiting
/// leaves the line without taking a turn.
@Suite struct IntakeLimitTests {
    /// A gate the tests open by hand, and a record of who ran.
    final class Gate: Sendable {
        let opened = Mutex(false)
        let log = Mutex<[Int]>([])
        let peak = Mutex((now: 0, most: 0))

        func wait() async throws {
            try await poll("the gate opened") { self.opened.withLock { $0 } }
        }

        func run(_ id: Int) async throws {
            peak.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            log.withLock { $0.append(id) }
            try await wait()
            peak.withLock { $0.now -= 1 }
        }
    }

    static func poll(_ what: String, _ done: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !done() {
            guard ContinuousClock.now < deadline else { throw PollTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    struct PollTimeout: Error { var what: String }

    /// Turns are given in arrival order. Callers end one at a time here: two turns given a
    /// moment apart may otherwise start their bodies in either order, as the executor schedules
    /// them, which says nothing about the order they were given in.
    @Test func neverMoreAtOnceThanTheLimitAndInArrivalOrder() async throws {
        let limit = IntakeLimit(maxRunning: 2, maxWaiting: 10)
        let gates = (0..<6).map { _ in Gate() }
        let record = Gate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<6 {
                group.addTask {
                    try await limit.run {
                        record.peak.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                        record.log.withLock { $0.append(id) }
                        try await gates[id].wait()
                        record.peak.withLock { $0.now -= 1 }
                    }
                }
                // Each is in line before the next arrives.
                try await Self.poll("caller \(id) admitted or waiting") {
                    let load = limit.load
                    return load.running + load.waiting == id + 1
                }
            }
            #expect(limit.load.running == 2)
            #expect(limit.load.waiting == 4)
            #expect(record.log.withLock { $0 }.sorted() == [0, 1])
            // Each caller that ends gives its turn to the first in line, and to no one else.
            for id in 0..<4 {
                gates[id].opened.withLock { $0 = true }
                try await Self.poll("caller \(id + 2) given the turn \(id) left") { record.log.withLock { $0.count } == id + 3 }
                #expect(record.log.withLock { $0.last } == id + 2)
            }
            for gate in gates { gate.opened.withLock { $0 = true } }
            try await group.waitForAll()
        }
        #expect(record.peak.withLock { $0.most } == 2)
        #expect(record.log.withLock { $0 }.count == 6)
        #expect(limit.load.running == 0)
        #expect(limit.load.waiting == 0)
    }

    @Test func aFullLineIsRefusedAtOnce() async throws {
        let limit = IntakeLimit(maxRunning: 1, maxWaiting: 1)
        let gate = Gate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await limit.run { try await gate.run(0) } }
            try await Self.poll("the first running") { limit.load.running == 1 }
            group.addTask { try await limit.run { try await gate.run(1) } }
            try await Self.poll("the second waiting") { limit.load.waiting == 1 }
            let busy = await #expect(throws: IntakeLimit.Busy.self) { try await limit.run { 0 } }
            #expect(busy == IntakeLimit.Busy(running: 1, waiting: 1))
            gate.opened.withLock { $0 = true }
            try await group.waitForAll()
        }
        #expect(gate.log.withLock { $0 } == [0, 1])
    }

    @Test func aCallerCancelledWhileWaitingLeavesTheLine() async throws {
        let limit = IntakeLimit(maxRunning: 1, maxWaiting: 5)
        let gate = Gate()
        let first = Task { try await limit.run { try await gate.run(0) } }
        try await Self.poll("the first running") { limit.load.running == 1 }
        let waiting = Task { try await limit.run { try await gate.run(1) } }
        try await Self.poll("the second waiting") { limit.load.waiting == 1 }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(limit.load.waiting == 0)
        gate.opened.withLock { $0 = true }
        try await first.value
        #expect(gate.log.withLock { $0 } == [0], "the cancelled caller never ran")
        #expect(limit.load.running == 0)
        // The turn it would have had is free.
        #expect(try await limit.run { 7 } == 7)
    }
}
