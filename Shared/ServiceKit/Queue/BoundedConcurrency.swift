/// Runs `body` for each of `items`, at most `width` at a time, and returns when all have finished;
/// the first error cancels the rest and is thrown. For a sweep's round: each item waits on the
/// database for most of its time, so one item at a time leaves the cores idle between round
/// trips, while a few at once keep them busy without taking every connection of the pool.
public func concurrentForEach<Item: Sendable>(
    _ items: [Item], atMost width: Int, _ body: @escaping @Sendable (Item) async throws -> Void
) async throws {
    let width = max(1, width)
    try await withThrowingTaskGroup(of: Void.self) { group in
        var pending = items.makeIterator()
        for _ in 0..<width {
            guard let item = pending.next() else { break }
            group.addTask { try await body(item) }
        }
        while try await group.next() != nil {
            if let item = pending.next() { group.addTask { try await body(item) } }
        }
    }
}
