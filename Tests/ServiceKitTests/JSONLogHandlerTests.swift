import Foundation
import ServiceKit
import ServiceKitHTTP
import Testing

@Suite struct JSONLogHandlerTests {
    @Test func quotesEverythingJSONRequires() throws {
        let quoted = JSONLogHandler.quote("a\"b\\c\nd\u{1}é")
        #expect(quoted == #""a\"b\\c\nd\u0001é""#)
        let decoded = try JSONDecoder().decode(String.self, from: Data(quoted.utf8))
        #expect(decoded == "a\"b\\c\nd\u{1}é")
    }
}
