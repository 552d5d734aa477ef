import ServiceKit
import Synchronization
import Testing

/// Group commit without a database: what arrives while a write is in flight waits for the next
/// write, batches keep to their size, writes to their number, and one bad item fails alone.
@Suite struct GroupCommitTests {
    struct Bad: Error {}
    struct Down: Error {}

    /// A write that records its batches and holds each one until the test lets it go.
    final class Writes: Sendable {
        private struct State {
            var batches: [[Int]] = []
            var running = 0
            var mostRunning = 0
            var held = true
        }
        private let state = Mutex(State())

        var batches: [[Int]] { state.withLock { $0.batches } }
        var mostRunning: Int { state.withLock { $0.mostRunning } }
        func release() { state.withLock { $0.held = false } }

        /// Doubles each item; fails a batch of several that holds a negative item with `Bad`,
        /// and a single negative item too.
        func write(_ items: [Int]) async throws -> [Result<Int, any Error>] {
            state.withLock { state in
                state.batches.append(items)
                state.running += 1
                state.mostRunning = max(state.mostRunning, state.running)
            }
            defer { state.withLock { $0.running -= 1 } }
            try await GroupCommitTests.poll("the test to release the write") { !state.withLock { $0.held } }
            if items.contains(where: { $0 < 0 }) { throw Bad() }
            return items.map { .success($0 * 2) }
        }
    }

    /// Polls `condition` every millisecond for up to ten seconds.
    static func poll(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("waited ten seconds for \(what)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Submits `items` at once, each from its own task, and waits until all are in the queue
    /// or in a write.
    static func submit(_ items: [Int], to commits: GroupCommit<Int, Int>) -> Task<[Result<Int, any Error>], Never> {
        Task {
            await withTaskGroup(of: (Int, Result<Int, any Error>).self) { group in
                for (index, item) in items.enumerated() {
                    group.addTask {
                        do { return (index, .success(try await commits.submit(item))) } catch { return (index, .failure(error)) }
                    }
                }
                var results = [Result<Int, any Error>?](repeating: nil, count: items.count)
                for await (index, result) in group { results[index] = result }
                return results.compactMap { $0 }
            }
        }
    }

    @Test func whatArrivesDuringAWriteIsWrittenTogetherInBatchesOfAtMostMaxBatch() async throws {
        let writes = Writes()
        let commits = GroupCommit<Int, Int>(maxBatch: 10, maxInFlight: 1, write: writes.write)
        let first = Self.submit([0], to: commits)
        try await Self.poll("the first write") { writes.batches.count == 1 }
        let rest = Self.submit(Array(1...25), to: commits)
        try await Self.poll("25 items waiting") { commits.waiting == 25 }
        writes.release()
        let firstResults = await first.value
        let restResults = await rest.value

        #expect(firstResults.count == 1)
        #expect(try firstResults[0].get() == 0)
        #expect(restResults.count == 25)
        for (index, result) in restResults.enumerated() { #expect(try result.get() == (index + 1) * 2) }
        let sizes = writes.batches.map(\.count)
        #expect(sizes == [1, 10, 10, 5])
        #expect(writes.batches.flatMap { $0 }.sorted() == Array(0...25))
        #expect(writes.mostRunning == 1)
        #expect(commits.waiting == 0)
    }

    @Test func noMoreWritesRunAtOnceThanMaxInFlight() async throws {
        let writes = Writes()
        let commits = GroupCommit<Int, Int>(maxBatch: 1, maxInFlight: 3, write: writes.write)
        let all = Self.submit(Array(1...12), to: commits)
        try await Self.poll("three writes running and nine items waiting") { writes.batches.count == 3 && commits.waiting == 9 }
        writes.release()
        let results = await all.value
        #expect(results.count == 12)
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        #expect(writes.batches.count == 12)
        #expect(writes.mostRunning == 3)
    }

    @Test func aBatchRefusedForOneItemIsWrittenItemByItemSoOnlyThatItemFails() async throws {
        let writes = Writes()
        let commits = GroupCommit<Int, Int>(maxBatch: 10, maxInFlight: 1, splitsOn: { $0 is Bad }, write: writes.write)
        let first = Self.submit([100], to: commits)
        try await Self.poll("the first write") { writes.batches.count == 1 }
        let rest = Self.submit([1, 2, -3, 4], to: commits)
        try await Self.poll("four items waiting") { commits.waiting == 4 }
        writes.release()
        _ = await first.value
        let results = await rest.value
        #expect(results.count == 4)
        #expect(try results[0].get() == 2)
        #expect(try results[1].get() == 4)
        #expect(throws: Bad.self) { try results[2].get() }
        #expect(try results[3].get() == 8)
        // The batch of four once, then each of its items alone.
        #expect(writes.batches.dropFirst().map(\.count) == [4, 1, 1, 1, 1])
    }

    @Test func aBatchThatFailsForAllFailsEachItemWithItsError() async throws {
        let commits = GroupCommit<Int, Int>(maxBatch: 10, maxInFlight: 1, splitsOn: { $0 is Bad }) { _ in throw Down() }
        let results = await Self.submit([1, 2, 3], to: commits).value
        #expect(results.count == 3)
        for result in results { #expect(throws: Down.self) { try result.get() } }
    }

    @Test func anItemTheWriteGaveNoResultForFailsRatherThanWaitsForever() async throws {
        let writes = Writes()
        let commits = GroupCommit<Int, Int>(maxBatch: 10, maxInFlight: 1) { items in Array(try await writes.write(items).prefix(1)) }
        let first = Self.submit([0], to: commits)
        try await Self.poll("the first write") { writes.batches.count == 1 }
        let rest = Self.submit([8, 9], to: commits)
        try await Self.poll("two items waiting") { commits.waiting == 2 }
        writes.release()
        #expect(try await first.value.first?.get() == 0)
        let results = await rest.value
        #expect(results.count == 2)
        // The two arrive from tasks of their own, in either order: the first in the batch gets
        // its result, the other fails rather than waits.
        let answered = results.compactMap { try? $0.get() }
        #expect(answered == [16] || answered == [18], "\(results)")
        #expect(results.filter { if case .failure(let error) = $0 { error is GroupCommitError } else { false } }.count == 1)
    }
}
