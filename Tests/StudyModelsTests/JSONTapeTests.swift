import StudyModels
import Testing

/// A text indexed in place (`JSONTape`) reads as `JSONValue.parse` reads it: the same values,
/// the same refusals at the same budget, whatever its spacing, escapes and repeated names.
@Suite struct JSONTapeTests {
    private static let budget = JSONValue.Budget(maxBytes: 1 << 20, maxNodes: 100_000)

    private static func read(_ text: String, budget: JSONValue.Budget = budget, tape: inout JSONTape) throws -> JSONValue {
        try tape.read(Array(text.utf8), budget: budget) { $0.jsonValue }
    }

    @Test func readsWhatTheParserReads() throws {
        let texts = [
            #"{"endTime": "2030-01-05T08:01:00.000-0500", "results": [{"key": "q0", "value": 0.42, "skipped": false}]}"#,
            #" [1, -0.5e-3, 1E2, 9007199254740993, 1.0, 0, "", "caf\u00e9", "a\"b\\c\/d\n\t\u0001", "\ud83d\ude00", true, false, null] "#,
            #"{"a": {"b": {"c": [[], {}, [{}], {"d": []}]}}, "e": "é ☃ 😀"}"#,
            #"{"a": 1, "b": 2, "a": 3}"#,
            #"{"k\u0065y": "x", "key": "y"}"#,
            "\"just a string\"", "12", "null", "\t\n{ }\r\n",
        ]
        #expect(texts.count == 9)
        var tape = JSONTape()
        for text in texts {
            let parsed = try JSONValue.parse(Array(text.utf8), budget: Self.budget)
            #expect(try Self.read(text, tape: &tape) == parsed, "\(text)")
            // Written back, a tape's scalars are what the parser's values write.
            try tape.read(Array(text.utf8), budget: Self.budget) { value in
                var scalars: [JSONTape.Value] = []
                func gather(_ value: JSONTape.Value) {
                    if value.scalar != nil { scalars.append(value) }
                    for item in value.items { gather(item) }
                    for member in value.members { gather(member.value) }
                }
                gather(value)
                #expect(!scalars.isEmpty || value.scalar == nil)
                for scalar in scalars {
                    var fromTape: [UInt8] = []
                    scalar.writeScalar(to: &fromTape)
                    var fromValue: [UInt8] = []
                    scalar.scalar?.write(to: &fromValue, sortedKeys: false)
                    #expect(fromTape == fromValue, "\(text)")
                }
            }
        }
    }

    /// A name written twice is there twice as members; looked up, the later wins, as the parser
    /// keeps it. Names are compared by their scalars and through their escapes.
    @Test func namesAreFoundByTheirScalarsTheLaterOfTwo() throws {
        var tape = JSONTape()
        try tape.read(Array(#"{"a": 1, "caf\u00e9": 2, "a": 3, "cafe\u0301": 4, "s": "x\u0079"}"#.utf8), budget: Self.budget) { value in
            #expect(value.members.map { $0.name.string ?? "" } == ["a", "caf\u{e9}", "a", "cafe\u{301}", "s"])
            #expect(value.member("a")?.number == JSONNumber(3))
            #expect(value.member("café")?.number == JSONNumber(2))
            #expect(value.member("cafe\u{301}")?.number == JSONNumber(4))
            #expect(value.member("b") == nil)
            #expect(value.member("s")?.isString("xy") == true)
            #expect(value.member("s")?.isString("x") == false)
            #expect(value.member("a")?.isString("3") == false)
            #expect(value.member("s")?.items.map(\.kind) == [])
        }
    }

    /// What the parser refuses, the tape refuses, over its budget as the parser is; and a
    /// refused text leaves nothing behind for the next one.
    @Test func refusesWhatTheParserRefuses() throws {
        let broken = [
            "", "{", #"{"a" 1}"#, #"{"a":1,}"#, "[1,]", "[1 2]", #""\x""#, #""\ud800""#, "tru", "01", "1.", "-", "1e400",
            "\"a\u{1}b\"", #"{"a":1} x"#, #"{1:2}"#, "[" + String(repeating: "[", count: 300) + String(repeating: "]", count: 301),
        ]
        #expect(broken.count == 17)
        var tape = JSONTape()
        for text in broken {
            #expect(throws: JSONValue.ParseError.self, "\(text)") { try JSONValue.parse(Array(text.utf8), budget: Self.budget) }
            #expect(throws: JSONValue.ParseError.self, "\(text)") { try Self.read(text, tape: &tape) }
        }
        let budgets: [(String, JSONValue.Budget)] = [
            ("[1,2,3]", JSONValue.Budget(maxBytes: 6, maxNodes: 100)),
            (#"{"a":[1,2]}"#, JSONValue.Budget(maxBytes: 100, maxNodes: 3)),
            ("[[[1]]]", JSONValue.Budget(maxBytes: 100, maxNodes: 100, maxDepth: 3)),
        ]
        for (text, budget) in budgets {
            var parserError: JSONValue.ParseError?
            do { _ = try JSONValue.parse(Array(text.utf8), budget: budget) } catch { parserError = error }
            var tapeError: JSONValue.ParseError?
            do { _ = try Self.read(text, budget: budget, tape: &tape) } catch { tapeError = error as? JSONValue.ParseError }
            #expect(parserError?.overBudget == true, "\(text)")
            #expect(tapeError == parserError, "\(text)")
        }
        // Exactly at the budget is within it, for both.
        let exact = JSONValue.Budget(maxBytes: 11, maxNodes: 5, maxDepth: 3)
        #expect(try JSONValue.parse(Array(#"{"a":[1,2]}"#.utf8), budget: exact) == (try Self.read(#"{"a":[1,2]}"#, budget: exact, tape: &tape)))
        #expect(try Self.read(#"{"b": true}"#, tape: &tape) == .object(["b": .bool(true)]))
    }

    /// Random documents, written with random spacing, read the same both ways.
    @Test func randomDocumentsReadTheSame() throws {
        var random = SplitMix64(seed: 56)
        var tape = JSONTape()
        var compared = 0
        for _ in 0..<300 {
            let value = Self.document(depth: 0, random: &random)
            let text = Self.spaced(value.serialized(sortedKeys: false), random: &random)
            let parsed = try JSONValue.parse(Array(text.utf8), budget: Self.budget)
            #expect(parsed == value)
            #expect(try Self.read(text, tape: &tape) == parsed)
            compared += 1
        }
        #expect(compared == 300)
    }

    private static func document(depth: Int, random: inout SplitMix64) -> JSONValue {
        let strings = ["", "a", "key", "caf\u{e9}", "cafe\u{301}", "line\nbreak", "q\"uote", "back\\slash", "\u{1F600}", "\u{7}"]
        switch depth > 3 ? random.below(6) : random.below(8) {
        case 0: return .null
        case 1: return .bool(random.below(2) == 0)
        case 2: return .number(JSONNumber(Double(random.below(2_000_001)) / 1000 - 1000))
        case 3: return .number(JSONNumber(text: ["0", "-0", "1e3", "2.50", "9007199254740993", "123456789012345678"][random.below(6)])!)
        case 4, 5: return .string(strings[random.below(strings.count)])
        case 6: return .array((0..<random.below(5)).map { _ in document(depth: depth + 1, random: &random) })
        default:
            var object = JSONObject()
            for _ in 0..<random.below(6) { object[strings[random.below(strings.count)]] = document(depth: depth + 1, random: &random) }
            return .object(object)
        }
    }

    /// `text` with whitespace put around its brackets, commas and colons at random (never
    /// within a string, a number or a literal).
    private static func spaced(_ text: String, random: inout SplitMix64) -> String {
        let spaces = [" ", "\n", "\t", "\r\n", "  "]
        var out = ""
        var inString = false
        var escaped = false
        for scalar in text.unicodeScalars {
            let structural = !inString && "{}[],:".unicodeScalars.contains(scalar)
            if structural, random.below(2) == 0 { out += spaces[random.below(spaces.count)] }
            out.unicodeScalars.append(scalar)
            if structural, random.below(2) == 0 { out += spaces[random.below(spaces.count)] }
            if inString {
                if escaped { escaped = false } else if scalar == "\\" { escaped = true } else if scalar == "\"" { inString = false }
            } else if scalar == "\"" {
                inString = true
            }
        }
        return out
    }
}

extension SplitMix64 {
    /// A number in 0..<bound.
    fileprivate mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }
}
