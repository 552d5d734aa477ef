import ConsoleCore
import JSONText
import Testing

@Suite struct VersionedCacheTests {
    @Test func aDraftIsServedOnlyAtTheVersionItWasReadAt() {
        let cache = DraftCache()
        cache.keep(.object(["name": .string("one")]), under: "S1", version: "\"1\" 100", bytes: 10)
        #expect(cache.value("S1", version: "\"1\" 100") == .object(["name": .string("one")]))
        #expect(cache.value("S1", version: "\"2\" 110") == nil)
        // The same revision saved at another time (a database restored from a backup) is another draft.
        #expect(cache.value("S1", version: "\"1\" 200") == nil)
        #expect(cache.value("S2", version: "\"1\" 100") == nil)
        cache.keep(.object(["name": .string("two")]), under: "S1", version: "\"2\" 110", bytes: 12)
        #expect(cache.value("S1", version: "\"1\" 100") == nil)
        #expect(cache.usage.entries == 1 && cache.usage.bytes == 12)
    }

    @Test func theLeastRecentlyUsedEntryGoesFirstWithinBothLimits() {
        let cache = VersionedCache<String, String>(maxEntries: 2, maxBytes: 100)
        cache.keep("a", under: "A", version: "1", bytes: 40)
        cache.keep("b", under: "B", version: "1", bytes: 40)
        _ = cache.value("A", version: "1")  // B is now the least recently used
        cache.keep("c", under: "C", version: "1", bytes: 10)
        #expect(cache.value("B", version: "1") == nil)
        #expect(cache.value("A", version: "1") == "a" && cache.value("C", version: "1") == "c")
        #expect(cache.usage.entries == 2 && cache.usage.bytes == 50)
        // Bytes: a large value pushes out what it must; one over the whole limit is not kept.
        cache.keep("d", under: "D", version: "1", bytes: 95)
        #expect(cache.usage.entries == 1 && cache.usage.bytes == 95)
        cache.keep("e", under: "E", version: "1", bytes: 101)
        #expect(cache.value("E", version: "1") == nil)
        #expect(cache.usage.bytes == 95)
        // A key kept again at a new version replaces its old value and bytes.
        cache.keep("d2", under: "D", version: "2", bytes: 30)
        #expect(cache.value("D", version: "1") == nil && cache.value("D", version: "2") == "d2")
        #expect(cache.usage.entries == 1 && cache.usage.bytes == 30)
    }
}
