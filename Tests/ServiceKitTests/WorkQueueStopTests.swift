import Logging
import PostgresNIO
import ServiceKit
import Synchronization
import Testing
import TestSupport

/// What becomes of a queue's item in hand when its worker is stopped or PostgreSQL goes away:
/// the work is done once and recorded, never left leased to be done again.
@Suite struct WorkQueueStopTests {
    @Test func aCancelledRoundFinishesAndRecordsTheItemInHandThenStops() async throws {
        let queue = RecordingQueue(items: [1, 2, 3], holding: 1)
        let round = Task { try await queue.drain("test", policy: RecordingQueue.policy, metrics: ServiceMetrics(), logger: Logger(label: "test")) }
        await queue.started()
        // The worker is asked to stop while item 1's work is out (a push APNs may have accepted).
        round.cancel()
        queue.release()
        await #expect(throws: CancellationError.self) { try await round.value }
        // Its record was made (a client that honours cancellation would have refused it), and
        // the round stopped before items 2 and 3.
        #expect(queue.snapshot.performed == [1])
        #expect(queue.snapshot.completed == [1])
        #expect(queue.snapshot.sawCancellation == false)
    }

    @Test func aRecordPostgreSQLCannotTakeYetIsMadeOnceItIsBack() async throws {
        let unavailable = try await Self.connectionRefused()
        #expect(PostgresErrors.isUnavailable(unavailable))
        let queue = RecordingQueue(items: [1], failingCompletions: Array(repeating: unavailable, count: 3))
        let took = try await queue.drain("test", policy: RecordingQueue.policy, metrics: ServiceMetrics(), logger: Logger(label: "test"))
        #expect(took == 1)
        // Done once, and recorded on the fourth try: not left leased to be done again.
        #expect(queue.snapshot.performed == [1])
        #expect(queue.snapshot.completionTries == 4)
        #expect(queue.snapshot.completed == [1])
    }

    @Test func aRecordRefusedForAnyOtherReasonIsNotTriedAgain() async throws {
        let queue = RecordingQueue(items: [1], failingCompletions: [RecordingQueue.Refused()])
        await #expect(throws: RecordingQueue.Refused.self) {
            try await queue.drain("test", policy: RecordingQueue.policy, metrics: ServiceMetrics(), logger: Logger(label: "test"))
        }
        #expect(queue.snapshot.completionTries == 1)
        #expect(queue.snapshot.completed.isEmpty)
    }

    @Test func boundedWorkWhoseCallerIsCancelledIsGivenItsGrace() async throws {
        let gate = Gate()
        let bounded = Task {
            await runBounded(by: .seconds(60), grace: .seconds(60)) {
                await gate.wait()
                return 7
            }
        }
        await gate.waitForWaiter()
        bounded.cancel()
        gate.open()
        guard case .finished(let value) = await bounded.value else {
            Issue.record("the work's own outcome was not waited for")
            return
        }
        #expect(value == 7)
    }

    @Test func boundedWorkThatOutlivesItsGraceIsLeftBehind() async throws {
        let gate = Gate()
        let bounded = Task {
            await runBounded(by: .seconds(60), grace: .milliseconds(50)) { () async -> Int in
                // Ignores cancellation, as an await on a dead connection can.
                await gate.wait()
                return 7
            }
        }
        await gate.waitForWaiter()
        bounded.cancel()
        guard case .cancelled = await bounded.value else {
            Issue.record("work past its grace was waited for")
            return
        }
        gate.open()
    }

    @Test func boundedWorkThatFailsBecauseItWasCancelledIsCancelledNotFailed() async throws {
        struct TransactionFailed: Error { var cause: any Error }
        let gate = Gate()
        let bounded = Task {
            await runBounded(by: .seconds(60), grace: .seconds(60)) { () async throws -> Int in
                await gate.wait()
                // The shutdown reaches the work once `runBounded` has registered its handler, which
                // under load can be after the gate opens: the work, like a transaction's next
                // statement, goes on until it is cancelled (the 60 s deadline ends a wait that
                // never is, as a time-out, so the test fails rather than hangs).
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(1)) }
                // A transaction wraps the cancellation of its closure in an error of its own, as
                // PostgresNIO's PostgresTransactionError does: a shutdown, not a failure.
                do { try Task.checkCancellation() } catch { throw TransactionFailed(cause: error) }
                return 7
            }
        }
        await gate.waitForWaiter()
        bounded.cancel()
        gate.open()
        guard case .cancelled = await bounded.value else {
            Issue.record("a round cancelled by its shutdown was reported as failed")
            return
        }
    }

    /// The error a real PostgreSQL client gives when nothing answers at the server's address.
    static func connectionRefused() async throws -> any Error {
        let configuration = PostgresConnection.Configuration(
            host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: nil, tls: .disable)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "test"))
            try await connection.close()
        } catch {
            return error
        }
        throw TestServerError(description: "something answered PostgreSQL's protocol on port 1")
    }
}

/// A one-shot gate: `wait` suspends until `open`; `waitForWaiter` until someone waits.
private final class Gate: Sendable {
    private struct State {
        var open = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var waiterArrived: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { continuation in
            let (resumeNow, arrived) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                let arrived = state.waiterArrived
                state.waiterArrived = []
                if state.open { return (true, arrived) }
                state.waiters.append(continuation)
                return (false, arrived)
            }
            arrived.forEach { $0.resume() }
            if resumeNow { continuation.resume() }
        }
    }

    func waitForWaiter() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if !state.waiters.isEmpty { return true }
                state.waiterArrived.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }
}

/// An in-memory queue that records what was done and recorded. Its `complete` honours
/// cancellation as a database client does, and can be made to fail a number of times first.
private final class RecordingQueue: WorkQueue {
    struct Refused: Error {}

    struct Snapshot {
        var performed: [Int] = []
        var completed: [Int] = []
        var completionTries = 0
        var sawCancellation = false
        var failingCompletions: [any Error] = []
    }

    static let policy = DrainPolicy(batchSize: 10, lease: .seconds(60), retry: RetryPolicy(maxAttempts: 3))
    let queueName = "test"
    var policy: DrainPolicy { Self.policy }
    let metrics = ServiceMetrics()
    let logger = Logger(label: "test")

    private let items: [Int]
    private let held: Int?
    private let gate = Gate()
    private let state: Mutex<Snapshot>

    init(items: [Int], holding held: Int? = nil, failingCompletions: [any Error] = []) {
        self.items = items
        self.held = held
        state = Mutex(Snapshot(failingCompletions: failingCompletions))
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    func started() async { await gate.waitForWaiter() }
    func release() { gate.open() }

    func claim(limit: Int, lease: Duration) async throws -> [Int] { Array(items.prefix(limit)) }
    func attempts(of item: Int) -> Int { 1 }

    func perform(_ item: Int) async -> WorkResult<Void> {
        state.withLock { $0.performed.append(item) }
        if item == held { await gate.wait() }
        if Task.isCancelled { state.withLock { $0.sawCancellation = true } }
        return .done(())
    }

    func complete(_ item: Int, with completion: Void) async throws {
        try Task.checkCancellation()
        let failure = state.withLock { state -> (any Error)? in
            state.completionTries += 1
            return state.failingCompletions.isEmpty ? nil : state.failingCompletions.removeFirst()
        }
        if let failure { throw failure }
        state.withLock { $0.completed.append(item) }
    }

    func fail(_ item: Int, reason: String, retryAfter: Duration?) async throws {
        Issue.record("item \(item) failed: \(reason)")
    }
}
