import ServiceKit
import Testing

@Suite struct ExpiringCacheTests {
    @Test func aCopyIsTrustedForItsLifetimeFromWhenItWasRead() {
        let cache = ExpiringCache<String, Int>(timeToLive: .seconds(30), capacity: 10)
        cache.keep(1, for: "fresh")
        cache.keep(2, for: "read before the lifetime", readAt: .now - .seconds(31))
        #expect(cache.value("fresh") == 1)
        #expect(cache.value("read before the lifetime") == nil)
        #expect(cache.value("never read") == nil)
        cache.forget("fresh")
        #expect(cache.value("fresh") == nil)
    }

    /// Keys chosen by clients cannot grow it past its capacity.
    @Test func aFullCacheStartsOverRatherThanGrow() {
        let cache = ExpiringCache<Int, Int>(timeToLive: .seconds(30), capacity: 100)
        for key in 0..<10_000 { cache.keep(key, for: key) }
        #expect(cache.count <= 100)
        #expect(cache.value(9_999) == 9_999)
        // Keeping a key it holds again does not empty it.
        let before = cache.count
        cache.keep(0, for: 9_999)
        #expect(cache.count == before)
        #expect(cache.value(9_999) == 0)
    }
}
