import HummingbirdCore
import ServiceKit
import ServiceKitHTTP
import Testing

/// Query strings are read as servlet containers read them (`+` is a space), so a client that
/// form-encodes its parameters (curl's `--data-urlencode`, browsers) is understood.
@Suite struct FormQueryTests {
    @Test func plusIsASpaceAndEscapesAreDecodedInNamesAndValues() {
        let query = URI("/x.api?sql=SELECT+energy%2C+Created+FROM+daily&a%20b=c%2Bd&empty=&flag").formParameters
        #expect(query["sql"] == "SELECT energy, Created FROM daily")
        #expect(query["a b"] == "c+d")
        #expect(query["empty"] == "")
        #expect(query["flag"] == "")
    }

    /// `&` and `=` separate whatever follows them: a combining mark after one (which would make
    /// them part of one character) does not hide it.
    @Test func pairsAreSplitByBytesNotCharacters() {
        let pairs = URI.formPairs("a=1&\u{301}b=2=3&&c")
        #expect(pairs.map(\.name) == ["a", "\u{301}b", "c"])
        #expect(pairs.map(\.value) == ["1", "2=3", ""])
    }

    @Test func aMalformedEscapeIsKeptAsItCame() {
        #expect(URI("/x?token=AB%zz").formParameters["token"] == "AB%zz")
        #expect(URI("/x").formParameters.isEmpty)
    }
}
