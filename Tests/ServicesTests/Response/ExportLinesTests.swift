import NIOCore
import ResponseCore
import Testing

/// The exports' lines are written from the cells' bytes: a JSON line carries each value as
/// PostgreSQL wrote it, a CSV field unquotes JSON strings (escapes too), guards formulas and
/// quotes what would break the record.
@Suite struct ExportLinesTests {
    static func csv(_ json: String?, text: Bool = true) -> String {
        var out: [UInt8] = []
        ExportLines.appendCSVLine(values: [json.map { ByteBuffer(string: $0) }], text: [text], to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func aJSONLineCarriesEachValueAsWrittenAndNullForNULL() {
        var out: [UInt8] = []
        ExportLines.appendJSONLine(
            table: Array(#""daily""#.utf8), keys: [Array(#""Key""#.utf8), Array(#""note""#.utf8), Array(#""q""#.utf8)],
            values: [ByteBuffer(string: "7"), ByteBuffer(string: #""a \"b\"\n""#), nil], to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"{"table":"daily","row":{"Key":7,"note":"a \"b\"\n","q":null}}"# + "\n")
    }

    @Test(arguments: [
        ("null", ""), ("12.5", "12.5"), ("true", "true"), (#""plain""#, "plain"), (#""""#, ""),
        (#""a,b""#, #""a,b""#), (#""say \"hi\"""#, #""say ""hi""""#), (#""two\r\nlines""#, "\"two\r\nlines\""),
        (#""caf\u00e9 \ud83d\ude00""#, "café 😀"), (#""back\\slash""#, #"back\slash"#),
    ])
    func aCSVFieldIsTheValueUnquotedAndQuotedWhereItMustBe(json: String, field: String) {
        #expect(Self.csv(json) == field + "\r\n")
    }

    @Test func aSQLNullIsAnEmptyField() {
        #expect(Self.csv(nil) == "\r\n")
        var out: [UInt8] = []
        ExportLines.appendCSVLine(values: [ByteBuffer(string: "1"), nil, ByteBuffer(string: #""x""#)], text: [false, true, true], to: &out)
        #expect(String(decoding: out, as: UTF8.self) == "1,,x\r\n")
    }

    /// A formula start hidden behind an escape is found after unescaping; only text answers are
    /// guarded (a negative number is not a formula).
    @Test func formulasInTextAnswersAreGuardedWhateverTheirEscaping() {
        #expect(Self.csv(#""=1+1""#) == "'=1+1\r\n")
        #expect(Self.csv(#""\t=cmd""#) == "'\t=cmd\r\n")
        #expect(Self.csv(#""\u003dHYPERLINK(\"x\")""#) == #""'=HYPERLINK(""x"")""# + "\r\n")
        #expect(Self.csv(#""-5""#, text: false) == "-5\r\n")
        #expect(Self.csv("-5", text: true) == "-5\r\n")
    }

    /// What PostgreSQL would never send still ends as one field, never a trap.
    @Test(arguments: [#"""#, #""unterminated"#, #""bad \x escape""#, #""\ud800""#])
    func malformedJSONIsWrittenAsItsText(json: String) {
        let line = Self.csv(json)
        #expect(line.hasSuffix("\r\n"))
    }
}
