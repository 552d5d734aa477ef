import JSONText
import StudyModels
import Testing

/// Numbers and text from outside, read without a trap and compared scalar by scalar.
@Suite struct UntrustedTextTests {
    @Test func wholeNumbersAreReadWithinTheirBoundsOnly() {
        #expect(WholeNumber.parse("42", in: 0...100) == 42)
        #expect(WholeNumber.parse("-3", in: -5...5) == -3)
        #expect(WholeNumber.parse("101", in: 0...100) == nil)
        #expect(WholeNumber.parse("9223372036854775807", in: 0...1_000_000) == nil)
        #expect(WholeNumber.parse("99999999999999999999999", in: 0...Int.max) == nil)
        #expect(WholeNumber.parse("", in: 0...10) == nil)
        #expect(WholeNumber.parse("1e3", in: 0...10_000) == nil)
        #expect(WholeNumber.parse("٣", in: 0...10) == nil, "only ASCII digits")
        #expect(WholeNumber.parse("9223372036854775807", in: Int64(0)...Int64.max) == Int64.max)
    }

    /// `Int(_: Double)` traps on these; `WholeNumber` says nil.
    @Test func doublesBecomeWholeNumbersOnlyWhenTheyAreOne() {
        #expect(WholeNumber.exactly(3, in: 0...10) == 3)
        #expect(WholeNumber.exactly(3.5, in: 0...10) == nil)
        #expect(WholeNumber.exactly(.nan, in: 0...10) == nil)
        #expect(WholeNumber.exactly(.infinity, in: Int.min...Int.max) == nil)
        #expect(WholeNumber.exactly(1e300, in: Int.min...Int.max) == nil)
        #expect(WholeNumber.exactly(Double(Int.max), in: Int.min...Int.max) == nil, "2^63 is one past Int.max")
        #expect(WholeNumber.rounded(2.6, in: 0...10) == 3)
        #expect(WholeNumber.rounded(-.infinity, in: Int.min...Int.max) == nil)
    }

    /// A quote followed by a combining mark is one `Character` that is not a quote: escaping by
    /// `Character` (Foundation's `replacingOccurrences`) leaves it as it is.
    @Test func escapingReplacesEveryScalarEvenInsideACluster() {
        let text = "a\"\u{301}b'\u{301}c\r\n"
        #expect(text.replacingScalars(["\"": "\"\""]).unicodeScalars.filter { $0 == "\"" }.count == 2)
        #expect(text.replacingScalars(["'": "''"]).unicodeScalars.filter { $0 == "'" }.count == 2)
        let spaced = text.replacingScalars(["\r": " ", "\n": " "])
        let expected = "a\"\u{301}b'\u{301}c  "
        #expect(spaced == expected)
        #expect(text.containsScalar(in: ["\""]))
        #expect(!text.contains("\""), "the Character view does not see the quote: why scalars are compared")
    }

    @Test func aJSONPointerEscapesAndSplitsByScalar() {
        // "~" and "/" followed by a combining mark are one Character each, and still escaped.
        let token = "a~\u{301}b/\u{301}c"
        let pointer = JSONPointer(tokens: [token, "x"])
        #expect(pointer.description == "/a~0\u{301}b~1\u{301}c/x")
        #expect(JSONPointer(pointer.description)?.tokens == [token, "x"])
        #expect(JSONPointer("/a/\u{301}b")?.tokens == ["a", "\u{301}b"])
        #expect(JSONPointer("/~01")?.tokens == ["~1"])
        #expect(JSONPointer("x/y") == nil)
    }

    @Test func oneLineMeansNoControlScalarAtAll() {
        #expect(TextRules.isSingleLine("Sleep Well — Duerma Bien"))
        #expect(!TextRules.isSingleLine("Sleep\r\nBcc: x@example.org"))
        #expect(!TextRules.isSingleLine("Sleep\nWell"))
        #expect(!TextRules.isSingleLine("Sleep\u{0085}Well"), "NEL, a C1 control")
        #expect(!TextRules.isSingleLine("Sleep\u{2028}Well"))
        #expect(!TextRules.isSingleLine("Tab\there"))
    }

    @Test func anEMailAddressHoldsNoWhiteSpaceOrControlScalar() {
        #expect(EmailAddress.isPlausible("pat@example.org"))
        #expect(EmailAddress.isPlausible("josé@example.es"))
        #expect(!EmailAddress.isPlausible("pat@example.org\r\nBcc: x@example.org"))
        #expect(!EmailAddress.isPlausible("pat\u{0}@example.org"))
        #expect(!EmailAddress.isPlausible("pat@example.org\u{85}"))
        #expect(!EmailAddress.isPlausible("pat@.example.org"))
        #expect(!EmailAddress.isPlausible("pat@example."))
        #expect(!EmailAddress.isPlausible(String(repeating: "a", count: 250) + "@b.org"))
    }
}
