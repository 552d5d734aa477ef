import JSONText
import Synchronization

/// The drafts this console read last, each under the version (revision and time of saving)
/// study-metadata named it by.
///
/// A study page needs the draft and the study's summary; the summary names the draft's current
/// revision, so a draft already read at that revision is not fetched and parsed again. Nothing is
/// trusted from here without the admin API: the summary that names the revision is read with the
/// admin's token on every page (and needs the same viewer role as the draft), and a revision never
/// names two contents, because every save moves it. Bounded in studies and in bytes; the least
/// recently used draft goes first.
package final class DraftCache: Sendable {
    struct Entry {
        var version: String
        var document: JSONValue
        var bytes: Int
        var lastUse: UInt64
    }

    struct State {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    let maxStudies: Int
    let maxBytes: Int
    let state = Mutex(State())

    package init(maxStudies: Int = 256, maxBytes: Int = 64 * 1024 * 1024) {
        self.maxStudies = maxStudies
        self.maxBytes = maxBytes
    }

    /// The draft of `studyId` if it was read at `version`.
    package func draft(_ studyId: String, version: String) -> JSONValue? {
        state.withLock { state in
            guard var entry = state.entries[studyId], entry.version == version else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[studyId] = entry
            return entry.document
        }
    }

    /// Keeps a draft read at `version` (`bytes`: its size as JSON), unless it alone is over the limit.
    package func keep(_ document: JSONValue, of studyId: String, version: String, bytes: Int) {
        guard bytes <= maxBytes else { return }
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: studyId) { state.bytes -= old.bytes }
            while !state.entries.isEmpty, state.entries.count >= maxStudies || state.bytes + bytes > maxBytes {
                let oldest = state.entries.min { $0.value.lastUse < $1.value.lastUse }!
                state.bytes -= oldest.value.bytes
                state.entries.removeValue(forKey: oldest.key)
            }
            state.clock += 1
            state.entries[studyId] = Entry(version: version, document: document, bytes: bytes, lastUse: state.clock)
            state.bytes += bytes
        }
    }

    /// How many drafts and bytes are kept (for tests and metrics).
    package var usage: (studies: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }
}
