import Logging
import Synchronization

/// Group commit for writes callers wait on: items that arrive while a write is in flight wait for
/// the next one, which `write` stores all together (one statement, one round trip, one commit,
/// one WAL flush). Each caller is answered only after the write that holds its item, so nothing
/// is acknowledged before it is durable; under load many items share a commit instead of each
/// paying for its own.
public final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    /// Writes a batch; one result per item, in the batch's order. Throwing fails the whole
    /// batch, unless `splitsOn` says the error was one item's (then each is written alone).
    public typealias Write = @Sendable ([Item]) async throws -> [Result<Outcome, any Error>]

    private struct Waiting {
        var item: Item
        var continuation: CheckedContinuation<Outcome, any Error>
    }

    private struct Queue {
        var waiting: [Waiting] = []
        var inFlight = 0

        mutating func take(_ maxBatch: Int) -> [Waiting] {
            let batch = Array(waiting.prefix(maxBatch))
            waiting.removeFirst(batch.count)
            return batch
        }
    }

    /// Most items one write takes, and most writes in flight (each takes a connection).
    public let maxBatch: Int
    public let maxInFlight: Int
    private let write: Write
    private let splitsOn: @Sendable (any Error) -> Bool
    private let logger: Logger
    /// A lock rather than an actor: enqueueing is a few instructions, and a request should not
    /// hop to another executor for them.
    private let queue = Mutex(Queue())

    /// - Parameter splitsOn: whether a batch that failed with this error may have failed for one
    ///   item alone (PostgreSQL refusing one row's value, say): its items are then written one by
    ///   one, so only the bad one fails and its neighbours are stored.
    public init(
        maxBatch: Int, maxInFlight: Int, splitsOn: @escaping @Sendable (any Error) -> Bool = { _ in false },
        logger: Logger = Logger(label: "studystack.group-commit"), write: @escaping Write
    ) {
        self.maxBatch = maxBatch
        self.maxInFlight = maxInFlight
        self.splitsOn = splitsOn
        self.logger = logger
        self.write = write
    }

    /// Items waiting for a write (not those in one).
    public var waiting: Int { queue.withLock { $0.waiting.count } }

    /// Stores `item` with whatever else is waiting; returns once its write has committed.
    public func submit(_ item: Item) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            let batch = queue.withLock { queue -> [Waiting]? in
                queue.waiting.append(Waiting(item: item, continuation: continuation))
                guard queue.inFlight < maxInFlight else { return nil }
                queue.inFlight += 1
                return queue.take(maxBatch)
            }
            if let batch { Task { await self.drain(startingWith: batch) } }
        }
    }

    private func results(of items: [Item]) async -> [Result<Outcome, any Error>] {
        do {
            return try await write(items)
        } catch where items.count > 1 && splitsOn(error) {
            logger.warning("a batch was refused; writing its items one by one", metadata: ["error": "\(error)"])
            var results: [Result<Outcome, any Error>] = []
            for item in items { results += await self.results(of: [item]) }
            return results
        } catch {
            return items.map { _ in .failure(error) }
        }
    }

    /// One writer: writes batches while items wait, then gives its slot back.
    private func drain(startingWith first: [Waiting]) async {
        var batch = first
        while true {
            let results = await results(of: batch.map(\.item))
            for (index, waiting) in batch.enumerated() {
                waiting.continuation.resume(with: index < results.count ? results[index] : .failure(GroupCommitError.noResult))
            }
            let next = queue.withLock { queue -> [Waiting]? in
                guard !queue.waiting.isEmpty else {
                    queue.inFlight -= 1
                    return nil
                }
                return queue.take(maxBatch)
            }
            guard let next else { return }
            batch = next
        }
    }
}

/// A write returned fewer results than it was given items.
public struct GroupCommitError: Error, CustomStringConvertible {
    public static let noResult = GroupCommitError()
    public var description: String { "the batch write gave no result for this item" }
}
