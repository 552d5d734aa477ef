import Foundation
import Testing

@testable import RegistrationCore

/// An admin list's search as the indexes read it: the range of ids that start with the text, and
/// an e-mail pattern in which LIKE's own characters match only themselves.
struct ListSearchTests {
    @Test func theStartOfAnIdIsTheRangeOfIdsThatStartSo() throws {
        let search = try #require(ListSearch("0A1b"))
        #expect(search.firstId == UUID(uuidString: "0a1b0000-0000-0000-0000-000000000000"))
        #expect(search.lastId == UUID(uuidString: "0a1bffff-ffff-ffff-ffff-ffffffffffff"))
        let dashed = try #require(ListSearch("0a1b2c3d-9"))
        #expect(dashed.firstId == UUID(uuidString: "0a1b2c3d-9000-0000-0000-000000000000"))
        #expect(dashed.lastId == UUID(uuidString: "0a1b2c3d-9fff-ffff-ffff-ffffffffffff"))
        let whole = "0a1b2c3d-9e8f-4a5b-8c7d-6e5f4a3b2c1d"
        let exact = try #require(ListSearch(whole))
        #expect(exact.firstId == UUID(uuidString: whole) && exact.lastId == UUID(uuidString: whole))
    }

    @Test func textThatNoIdStartsWithMatchesNoId() throws {
        for text in ["g", "0a1b2c3d9", "0a1b-", "0a1b2c3d-9e8f-4a5b-8c7d-6e5f4a3b2c1d0", "bob@", "é", " 0a"] {
            let search = try #require(ListSearch(text))
            #expect(search.firstId == nil && search.lastId == nil, "\(text)")
        }
    }

    @Test func anEmailPatternMatchesItsTextAnywhereAndLikesCharactersAsThemselves() throws {
        #expect(ListSearch("Bob@")?.emailPattern == "%bob@%")
        #expect(ListSearch("a_b%c\\d")?.emailPattern == "%a\\_b\\%c\\\\d%")
        #expect(ListSearch("") == nil && ListSearch(nil) == nil)
    }
}
