import Synchronization

/// A replica's short-lived copies of what it read from the database, each trusted for
/// `timeToLive` after it was read. Only for what a stale copy cannot make wrong: a change is
/// seen at most `timeToLive` late, so a caller either tolerates that or checks again where it
/// matters (at the write). Keys often come from clients, so the cache holds at most `capacity`
/// copies and starts over when full: a flood of new keys costs memory up to that bound and no more.
package final class ExpiringCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        var value: Value
        var readAt: ContinuousClock.Instant
    }

    private let entries = Mutex<[Key: Entry]>([:])
    package let timeToLive: Duration
    package let capacity: Int

    package init(timeToLive: Duration, capacity: Int) {
        self.timeToLive = timeToLive
        self.capacity = max(1, capacity)
    }

    /// The copy of `key`, unless there is none or it is older than `timeToLive`.
    package func value(_ key: Key) -> Value? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[key], entry.readAt.duration(to: now) < timeToLive else { return nil }
            return entry.value
        }
    }

    /// Keeps `value` as read at `readAt` (when the read began, so the copy never outlives what
    /// the database said by more than `timeToLive`).
    package func keep(_ value: Value, for key: Key, readAt: ContinuousClock.Instant = .now) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(value: value, readAt: readAt)
        }
    }

    package func forget(_ key: Key) {
        _ = entries.withLock { $0.removeValue(forKey: key) }
    }

    package func forgetAll() {
        entries.withLock { $0.removeAll(keepingCapacity: true) }
    }

    package var count: Int { entries.withLock { $0.count } }
}
