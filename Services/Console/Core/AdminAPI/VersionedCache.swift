import JSONText
import Synchronization

/// Values this console read or worked out last, each kept under the version of what it came
/// from, and served only while that version is current.
///
/// What is kept: a study's draft (`DraftCache`) and the section forms drawn from it, by study; a
/// study's menu, and an opened session cookie, each by everything it comes from (so with an
/// empty version).
///
/// A study page reads the study's summary through the admin API on every request, with the
/// admin's token; the summary names the draft's current revision and when it was saved, and a
/// revision never names two contents, because every save moves it (the time tells a database
/// restored to an older state apart). So anything worked out from the draft at a version can be
/// used again while the summary names that version, and nothing is trusted from here without the
/// admin API having been asked first.
///
/// Bounded in entries and in bytes; the least recently used entry goes first.
package final class VersionedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    struct Entry {
        var version: String
        var value: Value
        var bytes: Int
        var lastUse: UInt64
    }

    struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    let maxEntries: Int
    let maxBytes: Int
    let state = Mutex(State())

    package init(maxEntries: Int, maxBytes: Int) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// The value kept under `key` if it was worked out at `version`.
    package func value(_ key: Key, version: String) -> Value? {
        state.withLock { state in
            guard var entry = state.entries[key], entry.version == version else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.value
        }
    }

    /// Keeps `value` under `key`, worked out at `version` (`bytes`: about what it holds), in place
    /// of what the key held before; unless it alone is over the limit.
    package func keep(_ value: Value, under key: Key, version: String, bytes: Int) {
        guard bytes <= maxBytes else { return }
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.bytes }
            while state.entries.count >= maxEntries || state.bytes + bytes > maxBytes,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.bytes -= oldest.value.bytes
                state.entries.removeValue(forKey: oldest.key)
            }
            state.clock += 1
            state.entries[key] = Entry(version: version, value: value, bytes: bytes, lastUse: state.clock)
            state.bytes += bytes
        }
    }

    /// How many entries and bytes are kept (for tests and metrics).
    package var usage: (entries: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }
}

/// A key or version made of several parts, each prefixed by its length, so that no two lists of
/// parts make the same text (`"ab" + "c"` and `"a" + "bc"` differ).
package func lengthPrefixed(_ parts: [String]) -> String {
    parts.map { "\($0.utf8.count):\($0)" }.joined()
}

/// The drafts read last, by study, each under the version (revision and time of saving) the
/// study's summary named it by.
package typealias DraftCache = VersionedCache<String, JSONValue>

extension VersionedCache where Key == String, Value == JSONValue {
    /// Room for 256 studies' drafts, 64 MiB of their JSON.
    package convenience init() {
        self.init(maxEntries: 256, maxBytes: 64 * 1024 * 1024)
    }
}
