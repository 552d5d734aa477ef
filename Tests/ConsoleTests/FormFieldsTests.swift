import ConsoleCore
import Testing

/// Reading a submitted form as browsers send it, and refusing what no console page sends.
@Suite struct FormFieldsTests {
    @Test func plusIsASpaceAndEscapesAreDecodedInNamesAndValues() throws {
        let form = try FormFields(urlencoded: Array("%2Fname%2Fen=Sleep+well%21&csrf=a%2Bb&empty=&bare".utf8))
        #expect(form["/name/en"] == "Sleep well!")
        #expect(form["csrf"] == "a+b")
        #expect(form["empty"] == "")
        #expect(form["bare"] == "")
        #expect(form["missing"] == nil)
    }

    @Test func aRepeatedNameKeepsEveryValueInOrder() throws {
        let form = try FormFields(urlencoded: Array("/platforms=android&x=1&/platforms=ios".utf8))
        #expect(form.all("/platforms") == ["android", "ios"])
        #expect(form["/platforms"] == "android")
    }

    @Test func aMalformedEscapeIsKeptAsTyped() throws {
        let form = try FormFields(urlencoded: Array("v=100%25+sure&w=%zz".utf8))
        #expect(form["v"] == "100% sure")
        #expect(form["w"] == "%zz")
    }

    @Test func moreFieldsThanAnyPageHasAreRefused() {
        let body = Array(repeating: "a=1", count: FormFields.maxFields + 1).joined(separator: "&")
        #expect(throws: FormFields.ParseError.tooManyFields) { try FormFields(urlencoded: Array(body.utf8)) }
        let atLimit = Array(repeating: "a=1", count: FormFields.maxFields).joined(separator: "&")
        #expect((try? FormFields(urlencoded: Array(atLimit.utf8)))?.all("a").count == FormFields.maxFields)
    }

    @Test func aBodyThatIsNotUTF8IsRefused() {
        #expect(throws: FormFields.ParseError.notText) { try FormFields(urlencoded: [0x61, 0x3D, 0xFF, 0xFE]) }
    }
}
