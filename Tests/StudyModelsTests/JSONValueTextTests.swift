import Foundation
import StudyModels
import Testing
import TestSupport

/// The hand-written JSON reader and writer agree with Foundation's on real documents, and refuse
/// what is not JSON.
@Suite struct JSONValueTextTests {
    /// Every conformance response and design, read both ways.
    @Test func readsTheConformanceDocumentsAsFoundationDoes() throws {
        let folder = Conformance.labkey.appendingPathComponent("SurveyMetadata")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        var compared = 0
        for file in files {
            let data = try Data(contentsOf: folder.appendingPathComponent(file))
            guard let expected = try? JSONDecoder().decode(JSONValue.self, from: data) else {
                // The deliberately malformed files: refused by both.
                #expect(throws: JSONValue.ParseError.self, "\(file)") { try JSONValue.parse(data, budget: .studyDocument) }
                continue
            }
            let parsed = try JSONValue.parse(data, budget: .studyDocument)
            #expect(parsed == expected, "\(file)")
            // Written and read again, the same value; written twice, the same text.
            #expect(try JSONValue.parse(Array(parsed.serialized().utf8), budget: .studyDocument) == parsed, "\(file)")
            #expect(parsed.serialized() == expected.serialized())
            compared += 1
        }
        #expect(compared >= 40)
    }

    @Test func escapesAndNumbersRoundTrip() throws {
        let text = #"{"b": [1, -2.5, 3e2, 0.1, true, false, null], "a": "quote \" slash \/ tab \t é \u00e9 😀 \ud83d\ude00 \u0001"}"#
        let value = try JSONValue.parse(Array(text.utf8), budget: .studyDocument)
        #expect(value["a"] == .string("quote \" slash / tab \t é é 😀 😀 \u{01}"))
        #expect(value["b"] == .array([.number(1), .number(-2.5), .number(300), .number(0.1), .bool(true), .bool(false), .null]))
        let written = value.serialized()
        #expect(written.hasPrefix(#"{"a":"quote \"#))
        #expect(written.contains(#""b":[1,-2.5,300,0.1,true,false,null]"#))
        #expect(written.contains(#"\u0001"#))
        #expect(try JSONValue.parse(Array(written.utf8), budget: .studyDocument) == value)
        // Keys are sorted whatever order they came in.
        #expect(try JSONValue.parse(Array(#"{"z":1,"a":{"y":2,"b":3}}"#.utf8), budget: .studyDocument).serialized() == #"{"a":{"b":3,"y":2},"z":1}"#)
    }

    /// RFC 8259 compares member names by code points: names that Swift's `String` calls equal
    /// (canonically equivalent) are two members, each kept, found and written as sent.
    @Test func memberNamesThatDifferOnlyInNormalisationStayTwoMembers() throws {
        let composed = "\u{e9}", decomposed = "e\u{301}"
        #expect(composed == decomposed, "Swift's String equality is canonical equivalence: what this guards against")
        let value = try JSONValue.parse(Array(#"{"\#(composed)": 1, "\#(decomposed)": 2, "\u212Aey": 3, "Key": 4}"#.utf8), budget: .peerReply)
        let object = try #require(value.object)
        #expect(object.count == 4)
        #expect(object[composed] == .number(1))
        #expect(object[decomposed] == .number(2))
        #expect(object["\u{212A}ey"] == .number(3), "the Kelvin sign is its own name, not K")
        #expect(object["Key"] == .number(4))
        // Written back with both names, each byte for byte; read back, equal.
        let text = value.serialized()
        #expect(text.utf8.elementsEqual(#"{"Key":4,"\#(decomposed)":2,"\#(composed)":1,"\#u{212A}ey":3}"#.utf8), "\(text)")
        #expect(try JSONValue.parse(Array(text.utf8), budget: .peerReply) == value)
        // Through Codable too (what the admin API's replies are written with).
        let encoded = try JSONEncoder().encode(JSONValue.object(["\u{e9}": .number(1), "e\u{301}": .number(2)]))
        #expect(String(decoding: encoded, as: UTF8.self).contains(decomposed))
        // And the two objects with one name each are different objects.
        #expect(JSONValue.object([composed: .number(1)]) != JSONValue.object([decomposed: .number(1)]))
    }

    /// A number is kept as the decimal it was written as: written back unchanged where a double
    /// would change it, and in the usual short form where it would not.
    @Test func numbersAreKeptAsTheDecimalsTheyWere() throws {
        func reread(_ text: String) throws -> String { try JSONValue.parse(Array(text.utf8), budget: .peerReply).serialized() }
        #expect(try reread("9007199254740993") == "9007199254740993")
        #expect(try reread("[0.10000000000000000001, 1.0, 2.50, -0, 1e2, 12345678901234567890123]")
            == "[0.10000000000000000001,1,2.5,0,100,12345678901234567890123]")
        let big = try JSONValue.parse(Array("9007199254740993".utf8), budget: .peerReply)
        #expect(big != JSONValue.number(9007199254740992), "equal as doubles, not as numbers")
        #expect(big.text == "9007199254740993")
        #expect(big.integer == nil, "no Int reads it exactly from a double")
        #expect(try JSONValue.parse(Array("1.0".utf8), budget: .peerReply) == .number(1))
        // Past a double's range: refused, and said so.
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Array("1e400".utf8), budget: .peerReply) }
        let decimal = try #require(ExactDecimal("-12.5e-3"))
        #expect(decimal.description == "-0.0125")
        #expect(try #require(ExactDecimal("0.0075")).isMultiple(of: try #require(ExactDecimal("0.0001"))))
        #expect(try #require(ExactDecimal("2")) < (try #require(ExactDecimal("10"))))
        #expect(try #require(ExactDecimal("-10")) < (try #require(ExactDecimal("-2"))))
        #expect(try #require(ExactDecimal("0.5")) < (try #require(ExactDecimal("0.51"))))
    }

    @Test func whatIsNotJSONIsRefused() {
        let bad = [
            "", " ", "{", "}", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a:1}", "'x'", "01", "1.", ".5", "-", "1e", "tru", "nul",
            "\"unterminated", "\"bad \\x escape\"", "\"\\ud800\"", "\"\\udc00\"", "\"tab\there\"", "[1] 2", "NaN", "Infinity",
            "1e999", String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        ]
        for text in bad {
            #expect(throws: JSONValue.ParseError.self, "\(text.prefix(20))") { try JSONValue.parse(Array(text.utf8), budget: .studyDocument) }
        }
    }

    @Test func membersOfAnObjectComeWithTheirTextUnbuilt() throws {
        let text = Array(#" {"type": "SurveyResponse", "data": {"results": [1, {"a": "\u00e9"}]}, "n": -1.5e3} "#.utf8)
        let members = try text.withUnsafeBufferPointer { try JSONValue.members(ofObject: $0, budget: .studyDocument) }
        #expect(members.map(\.name) == ["type", "data", "n"])
        let values = members.map { String(decoding: text[$0.value], as: UTF8.self) }
        #expect(values == [#""SurveyResponse""#, #"{"results": [1, {"a": "\u00e9"}]}"#, "-1.5e3"])
        for bad in [#"{"a": [1,}"#, #"{"a": "\q"}"#, #"[1]"#, #"{"a": 1} x"#, #"{"a": "\ud800"}"#] {
            let bytes = Array(bad.utf8)
            #expect(throws: JSONValue.ParseError.self, "\(bad)") {
                try bytes.withUnsafeBufferPointer { _ = try JSONValue.members(ofObject: $0, budget: .studyDocument) }
            }
        }
    }

    @Test func aNumberAsTextIsItsDigitsOrItsDoubleWhenNoIntegerHoldsIt() {
        #expect(JSONValue.number(3).text == "3")
        #expect(JSONValue.number(-2.5).text == "-2.5")
        #expect(JSONValue.number(-1e300).text == "-1e+300")
        #expect(JSONValue.number(9.3e18).text == "9.3e+18")
    }
}

/// Each parse is held to a budget of bytes, nodes and depth (docs/security.md, Budgets): the
/// small text that builds a large tree is refused before it is built.
@Suite struct JSONBudgetTests {
    /// `count` one-member objects in an array: five bytes of text each, a hash table each once built.
    static func oneMemberObjects(_ count: Int) -> [UInt8] {
        Array(("[" + Array(repeating: #"{"a":1}"#, count: count).joined(separator: ",") + "]").utf8)
    }

    @Test func aTextPastItsNodesIsRefusedWhereTheBudgetRunsOut() throws {
        let budget = JSONValue.Budget(maxBytes: 1 << 20, maxNodes: 1_000)
        // 1 array + 3 nodes an object (the object, its name, its value): 333 objects fit, 334 do not.
        let fits = try JSONValue.parse(Self.oneMemberObjects(333), budget: budget)
        #expect(fits.array?.count == 333)
        let error = try #require(throws: JSONValue.ParseError.self) {
            try JSONValue.parse(Self.oneMemberObjects(100_000), budget: budget)
        }
        #expect(error.reason == "more than 1000 values")
        // Refused where the thousand-and-first node starts, not after reading the whole text.
        #expect(error.offset < 3_000, "\(error)")
    }

    @Test func aTextPastItsBytesIsRefusedBeforeItIsRead() throws {
        let budget = JSONValue.Budget(maxBytes: 100, maxNodes: 1_000)
        let error = try #require(throws: JSONValue.ParseError.self) {
            try JSONValue.parse(Array(("\"" + String(repeating: "x", count: 100) + "\"").utf8), budget: budget)
        }
        #expect(error.reason == "larger than 100 bytes")
        #expect(error.offset == 0)
        #expect(try JSONValue.parse(Array(("\"" + String(repeating: "x", count: 98) + "\"").utf8), budget: budget).string?.count == 98)
    }

    @Test func aTextDeeperThanItsBudgetIsRefused() throws {
        let budget = JSONValue.Budget(maxBytes: 1 << 20, maxNodes: 1_000, maxDepth: 8)
        let deep = { (levels: Int) in Array((String(repeating: "[", count: levels) + String(repeating: "]", count: levels)).utf8) }
        #expect(try JSONValue.parse(deep(8), budget: budget) != .null)
        let error = try #require(throws: JSONValue.ParseError.self) { try JSONValue.parse(deep(9), budget: budget) }
        #expect(error.reason == "nested more than 8 deep")
        // No budget goes past the stack's own bound.
        #expect(JSONValue.Budget(maxBytes: 1, maxNodes: 1, maxDepth: 100_000).maxDepth == JSONValue.maxDepth)
        // The member reader, which builds nothing, keeps to the depth too.
        let members = Array(#"{"a":[[[[[[[[[]]]]]]]]]}"#.utf8)
        #expect(throws: JSONValue.ParseError.self) {
            try members.withUnsafeBufferPointer { _ = try JSONValue.members(ofObject: $0, budget: budget) }
        }
    }

    @Test func textsThatShareABudgetSpendItTogether() throws {
        var budget = JSONValue.Budget(maxBytes: 1 << 20, maxNodes: 700)
        _ = try JSONValue.parse(Self.oneMemberObjects(100), sharing: &budget)
        #expect(budget.maxNodes == 700 - 301)
        _ = try JSONValue.parse(Self.oneMemberObjects(100), sharing: &budget)
        #expect(budget.maxNodes == 700 - 602)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Self.oneMemberObjects(100), sharing: &budget) }
    }
}

/// `JSONValue`s decoded through Foundation's `JSONDecoder` spend one budget per decoding when
/// the decoder has one (`JSONDecoder.budgeted`).
@Suite struct JSONValueDecodingBudgetTests {
    struct Carrier: Decodable {
        var first: JSONValue
        var second: JSONValue
    }

    @Test func theValuesOfOneDecodingShareItsBudget() throws {
        // 201 values each: the array, its objects and their values (a member's name is no value here).
        let half = JSONBudgetTests.oneMemberObjects(100)
        let text = Data(#"{"first": \#(String(decoding: half, as: UTF8.self)), "second": \#(String(decoding: half, as: UTF8.self))}"#.utf8)
        #expect(try JSONDecoder.budgeted(maxNodes: 402).decode(Carrier.self, from: text).second.array?.count == 100)
        #expect(throws: DecodingError.self) { try JSONDecoder.budgeted(maxNodes: 401).decode(Carrier.self, from: text) }
        // Each decoding has its own: a decoder used again starts afresh only with a new budget.
        #expect(try JSONDecoder().decode(Carrier.self, from: text).first.array?.count == 100, "no budget, as before")
    }
}
