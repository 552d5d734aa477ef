import ServiceKit
import Testing

/// The one cut of every paged admin list: the extra row read says there is more, and the cursor
/// is the last item kept.
@Suite struct KeysetPageTests {
    @Test func theExtraRowMeansAnotherPageWhoseCursorIsTheLastItemKept() {
        let full = KeysetPage([1, 2, 3, 4], limit: 3) { "k\($0)" }
        #expect(full.items == [1, 2, 3])
        #expect(full.next == "k3")
        let last = KeysetPage([1, 2, 3], limit: 3) { "k\($0)" }
        #expect(last.items == [1, 2, 3])
        #expect(last.next == nil)
        let short = KeysetPage([1], limit: 3) { "k\($0)" }
        #expect(short.items == [1] && short.next == nil)
        let empty = KeysetPage([Int](), limit: 3) { "k\($0)" }
        #expect(empty.items.isEmpty && empty.next == nil)
    }

    @Test func limitsAtTheEdgesNeitherTrapNorOverflow() {
        #expect(KeysetPage<Int, Int>.fetchLimit(50) == 51)
        #expect(KeysetPage<Int, Int>.fetchLimit(0) == 1)
        #expect(KeysetPage<Int, Int>.fetchLimit(-5) == 1)
        #expect(KeysetPage<Int, Int>.fetchLimit(Int.max) == Int.max)
        let none = KeysetPage([1, 2], limit: 0) { $0 }
        #expect(none.items.isEmpty && none.next == nil)
        let negative = KeysetPage([1, 2], limit: -1) { $0 }
        #expect(negative.items.isEmpty && negative.next == nil)
    }
}
