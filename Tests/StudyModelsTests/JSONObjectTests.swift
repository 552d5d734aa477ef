import StudyModels
import Testing

/// A JSON object keeps its members in the order they were first set (as sent, or as built), is
/// equal and hashed regardless of that order, and looks names up by their scalars whether it
/// holds a few members or many.
@Suite struct JSONObjectTests {
    private static let budget = JSONValue.Budget(maxBytes: 1 << 20, maxNodes: 100_000)

    @Test func membersKeepTheOrderTheyWereSentAndWrittenIn() throws {
        let text = #"{"zeta":1,"alpha":[2,3],"mid":{"b":true,"a":null},"Ω":"x"}"#
        let parsed = try JSONValue.parse(Array(text.utf8), budget: Self.budget)
        #expect(parsed.object?.keys == ["zeta", "alpha", "mid", "Ω"])
        #expect(parsed.serialized(sortedKeys: false) == text)
        #expect(parsed.serialized() == #"{"alpha":[2,3],"mid":{"a":null,"b":true},"zeta":1,"Ω":"x"}"#)
        var built: JSONObject = ["resourceType": .string("Patient"), "id": .string("7")]
        built["active"] = .bool(true)
        built["id"] = .string("8")
        #expect(built.keys == ["resourceType", "id", "active"])
        #expect(JSONValue.object(built).serialized(sortedKeys: false) == #"{"resourceType":"Patient","id":"8","active":true}"#)
        built.removeValue(forKey: "resourceType")
        #expect(built.keys == ["id", "active"])
        #expect(built.values == [.string("8"), .bool(true)])
    }

    @Test func orderDoesNotMakeTwoObjectsDifferent() throws {
        let one = try JSONValue.parse(Array(#"{"a":1,"b":{"c":[1,2],"d":"e"}}"#.utf8), budget: Self.budget)
        let other = try JSONValue.parse(Array(#"{"b":{"d":"e","c":[1,2]},"a":1}"#.utf8), budget: Self.budget)
        let changed = try JSONValue.parse(Array(#"{"b":{"d":"e","c":[2,1]},"a":1}"#.utf8), budget: Self.budget)
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(Set([one, other, changed]).count == 2)
        #expect(one != changed)
        // Same size, a name missing: not equal.
        #expect(JSONValue.object(["a": .null]) != JSONValue.object(["b": .null]))
    }

    /// Past the size where members are scanned, an index takes over: every name is still found,
    /// removed and replaced where it stands.
    @Test func anObjectOfManyMembersIsIndexedAndStaysInOrder() throws {
        let count = 5_000
        let text = "{" + (0..<count).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        let parsed = try JSONValue.parse(Array(text.utf8), budget: Self.budget)
        guard case .object(var object) = parsed else {
            Issue.record("not an object")
            return
        }
        #expect(object.count == count)
        #expect(object.keys.first == "k0")
        #expect(object.keys.last == "k\(count - 1)")
        for probe in [0, 15, 16, 17, 2_500, count - 1] {
            #expect(object["k\(probe)"] == .number(JSONNumber(Double(probe))), "k\(probe)")
        }
        #expect(object["k\(count)"] == nil)
        object.removeValue(forKey: "k3")
        object["k10"] = .string("ten")
        object["new"] = .bool(true)
        #expect(object.count == count)
        #expect(object["k3"] == nil)
        #expect(object["k4"] == .number(JSONNumber(4)))
        #expect(object["k10"] == .string("ten"))
        #expect(Array(object.keys.prefix(4)) == ["k0", "k1", "k2", "k4"])
        #expect(object.keys.last == "new")
        // Filtered down to a few, it is scanned again and still finds its names.
        let few = object.filter { $0.key.hasSuffix("0") && $0.key.count == 2 }
        #expect(few.keys == ["k0"])
        #expect(few["k0"] == .number(JSONNumber(0)))
    }

    /// A repeated name keeps one member, the later value in the first one's place, in a small
    /// object and in one past the index's size alike; names that differ only in normalisation
    /// stay two.
    @Test func aRepeatedNameKeepsTheLaterValueWhereTheFirstStood() throws {
        let small = try JSONValue.parse(Array(#"{"a":1,"b":2,"a":3,"e\u0301":4,"\u00e9":5}"#.utf8), budget: Self.budget)
        #expect(small.object?.keys == ["a", "b", "e\u{301}", "\u{e9}"])
        #expect(small["a"] == .number(JSONNumber(3)))
        let names = (0..<40).map { "\"n\($0)\":\($0)" }.joined(separator: ",")
        let large = try JSONValue.parse(Array("{\(names),\"n2\":\"again\",\"n39\":\"last\"}".utf8), budget: Self.budget)
        #expect(large.object?.count == 40)
        #expect(large["n2"] == .string("again"))
        #expect(large["n39"] == .string("last"))
        #expect(large.object?.keys[2] == "n2")
        #expect(large.object?.keys.last == "n39")
    }

    /// Objects and arrays within each other are each gathered and made at their size: nested
    /// values come out whole and in place, however deep and however the nesting alternates.
    @Test func nestedObjectsAndArraysComeOutWhole() throws {
        let text = #"[{"a":[1,{"b":[2,3],"c":{}},[]],"d":{"e":[{"f":[4]}]}},[],[[5],[6,{"g":7}]],{"h":null}]"#
        let parsed = try JSONValue.parse(Array(text.utf8), budget: Self.budget)
        #expect(parsed.serialized(sortedKeys: false) == text)
        #expect(parsed.array?.count == 4)
        #expect(parsed.array?.first?["a"]?.array?[1]["b"] == .array([.number(JSONNumber(2)), .number(JSONNumber(3))]))
        // A text refused part way leaves nothing behind for the next parse.
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(Array(#"[{"a":[1,{"b":"#.utf8), budget: Self.budget) }
        #expect(try JSONValue.parse(Array(#"{"x":[1]}"#.utf8), budget: Self.budget).serialized() == #"{"x":[1]}"#)
    }
}
