import Logging
import ServiceKit
import Synchronization
import Testing

/// What a round decides for each item, without a database: done, tried again after a growing
/// wait, or given up; and the waits themselves.
@Suite struct QueueSettlementTests {
    @Test func eachOutcomeIsRecordedAsTheRetryPolicySays() async throws {
        // Item n has been claimed `attempts` times (this claim included), and its attempt ends so.
        let queue = ScriptedQueue(script: [
            1: (1, .done(())),
            2: (1, .failed("peer down")),
            3: (3, .failed("peer down")),   // its third and last allowed attempt
            4: (1, .rejected("refused for good")),
        ])
        let took = try await queue.round()
        #expect(took == 4)
        let records = queue.records
        try #require(records.count == 4)
        #expect(records[0] == .completed(1))
        guard case .failed(2, "peer down", let wait?) = records[1] else {
            Issue.record("item 2 was not retried: \(records[1])")
            return
        }
        // The first retry waits the first backoff, give or take its 20% jitter.
        #expect(wait >= .milliseconds(1600) && wait <= .milliseconds(2400))
        #expect(records[2] == .gaveUp(3, "peer down", attempts: 3))
        // A refusal is never retried, whatever attempt it was.
        #expect(records[3] == .failed(4, "refused for good", nil))
    }

    @Test func aRoundTakesNoMoreThanItsBatchAndStopsWhenNothingIsDue() async throws {
        let queue = ScriptedQueue(script: Dictionary(uniqueKeysWithValues: (1...5).map { ($0, (1, WorkResult<Void>.done(()))) }), batchSize: 2)
        #expect(try await queue.round() == 2)
        #expect(try await queue.round() == 2)
        #expect(try await queue.round() == 1)
        #expect(try await queue.round() == 0)
        #expect(queue.records == [.completed(1), .completed(2), .completed(3), .completed(4), .completed(5)])
    }

    @Test func waitsDoubleWithJitterUpToTheirCapAndAttemptsRunOut() {
        let policy = RetryPolicy(maxAttempts: 5, firstBackoff: .seconds(2), maxBackoff: .seconds(60))
        for (attempts, base) in [(1, 2.0), (2, 4.0), (3, 8.0), (4, 16.0)] {
            guard case .retry(let wait) = policy.afterFailure(attempts: attempts, permanent: false) else {
                Issue.record("attempt \(attempts) was not retried")
                continue
            }
            #expect(wait.inSeconds >= base * 0.8 && wait.inSeconds <= base * 1.2, "attempt \(attempts): \(wait)")
        }
        #expect(policy.afterFailure(attempts: 5, permanent: false) == .giveUp)
        #expect(policy.afterFailure(attempts: 1, permanent: true) == .giveUp)
        // Capped, however many attempts (and the doubling never overflows).
        let long = RetryPolicy(maxAttempts: nil, firstBackoff: .seconds(2), maxBackoff: .seconds(60))
        for attempts in [10, 64, Int.max] {
            #expect(long.backoff(afterAttempts: attempts).inSeconds <= 72)
        }
        #expect(long.afterFailure(attempts: Int.max, permanent: false) != .giveUp)
    }
}

/// An in-memory queue whose items end as scripted; it records what a round recorded.
private final class ScriptedQueue: WorkQueue {
    enum Record: Equatable {
        case completed(Int)
        case failed(Int, String, Duration?)
        case gaveUp(Int, String, attempts: Int)
    }

    let queueName = "scripted"
    let policy: DrainPolicy
    let metrics = ServiceMetrics()
    let logger = Logger(label: "test")
    private let script: [Int: (attempts: Int, result: WorkResult<Void>)]
    private let state = Mutex<(due: [Int], records: [Record])>(([], []))

    init(script: [Int: (Int, WorkResult<Void>)], batchSize: Int = 10) {
        self.script = script.mapValues { (attempts: $0.0, result: $0.1) }
        policy = DrainPolicy(batchSize: batchSize, lease: .seconds(60), retry: RetryPolicy(maxAttempts: 3))
        state.withLock { $0.due = script.keys.sorted() }
    }

    var records: [Record] { state.withLock { $0.records } }

    func claim(limit: Int, lease: Duration) async throws -> [Int] {
        state.withLock { state in
            let batch = Array(state.due.prefix(limit))
            state.due.removeFirst(batch.count)
            return batch
        }
    }

    func attempts(of item: Int) -> Int { script[item]?.attempts ?? 1 }
    func perform(_ item: Int) async -> WorkResult<Void> { script[item]?.result ?? .failed("unscripted") }
    func complete(_ item: Int, with _: Void) async throws { state.withLock { $0.records.append(.completed(item)) } }

    func fail(_ item: Int, reason: String, retryAfter: Duration?) async throws {
        state.withLock { $0.records.append(.failed(item, reason, retryAfter)) }
    }

    func giveUp(_ item: Int, reason: String, attempts: Int) async throws {
        state.withLock { $0.records.append(.gaveUp(item, reason, attempts: attempts)) }
    }
}
