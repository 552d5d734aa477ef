import Synchronization
import Testing

import ServiceKit

/// `concurrentForEach`: every item once, never more than the width at a time, and the first error
/// thrown after the others are cancelled.
struct BoundedConcurrencyTests {
    final class Counters: Sendable {
        let running = Mutex(0)
        let most = Mutex(0)
        let done = Mutex<[Int]>([])
    }

    @Test func everyItemRunsOnceAndNoMoreThanTheWidthAtOnce() async throws {
        let counters = Counters()
        try await concurrentForEach(Array(0..<40), atMost: 3) { item in
            let now = counters.running.withLock { running in
                running += 1
                return running
            }
            counters.most.withLock { $0 = max($0, now) }
            // Long enough that the next items start while this one runs.
            try await Task.sleep(for: .milliseconds(2))
            counters.running.withLock { $0 -= 1 }
            counters.done.withLock { $0.append(item) }
        }
        let done = counters.done.withLock { $0 }
        try #require(done.count == 40)
        #expect(done.sorted() == Array(0..<40))
        #expect(counters.most.withLock { $0 } == 3, "three ran at once, never more")
    }

    @Test func aWidthBelowOneStillRunsEachItem() async throws {
        let counters = Counters()
        try await concurrentForEach([1, 2, 3], atMost: 0) { item in counters.done.withLock { $0.append(item) } }
        #expect(counters.done.withLock { $0 }.sorted() == [1, 2, 3])
    }

    struct Refused: Error, Equatable { let item: Int }

    @Test func theFirstErrorIsThrown() async throws {
        await #expect(throws: Refused(item: 5)) {
            try await concurrentForEach(Array(0..<20), atMost: 1) { item in
                if item == 5 { throw Refused(item: 5) }
            }
        }
    }
}
