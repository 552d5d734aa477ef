import ConsoleCore
import JSONText
import Testing

@Suite struct DraftCacheTests {
    @Test func aDraftIsServedOnlyAtTheVersionItWasReadAt() {
        let cache = DraftCache()
        cache.keep(.object(["name": .string("one")]), of: "S1", version: "\"1\" 100", bytes: 10)
        #expect(cache.draft("S1", version: "\"1\" 100") == .object(["name": .string("one")]))
        #expect(cache.draft("S1", version: "\"2\" 110") == nil)
        // The same revision saved at another time (a database restored from a backup) is another draft.
        #expect(cache.draft("S1", version: "\"1\" 200") == nil)
        #expect(cache.draft("S2", version: "\"1\" 100") == nil)
        cache.keep(.object(["name": .string("two")]), of: "S1", version: "\"2\" 110", bytes: 12)
        #expect(cache.draft("S1", version: "\"1\" 100") == nil)
        #expect(cache.usage.studies == 1 && cache.usage.bytes == 12)
    }

    @Test func theLeastRecentlyUsedDraftGoesFirstWithinBothLimits() {
        let cache = DraftCache(maxStudies: 2, maxBytes: 100)
        cache.keep(.null, of: "A", version: "1", bytes: 40)
        cache.keep(.null, of: "B", version: "1", bytes: 40)
        _ = cache.draft("A", version: "1")  // B is now the least recently used
        cache.keep(.null, of: "C", version: "1", bytes: 10)
        #expect(cache.draft("B", version: "1") == nil)
        #expect(cache.draft("A", version: "1") != nil && cache.draft("C", version: "1") != nil)
        #expect(cache.usage.studies == 2 && cache.usage.bytes == 50)
        // Bytes: a large draft pushes out what it must; one over the whole limit is not kept.
        cache.keep(.null, of: "D", version: "1", bytes: 95)
        #expect(cache.usage.studies == 1 && cache.usage.bytes == 95)
        cache.keep(.null, of: "E", version: "1", bytes: 101)
        #expect(cache.draft("E", version: "1") == nil)
        #expect(cache.usage.bytes == 95)
    }
}
