import JSONSchema
import JSONText
import Testing

/// What the suite does not check: how problems are reported, what a schema that cannot be
/// compiled says, and that no schema or document can make validation trap or run away.
@Suite struct ValidatorTests {
    private func json(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8), budget: JSONValue.Budget(maxBytes: 1 << 26, maxNodes: 1 << 22)) }

    @Test func aReportNamesTheInstancePointerTheKeywordPathAndASentence() throws {
        let schema = try JSONSchema(json("""
            {"type": "object", "required": ["identifier", "steps"],
             "properties": {"identifier": {"type": "string", "minLength": 1},
                            "steps": {"type": "array", "items": {"$ref": "#/definitions/step"}}},
             "additionalProperties": false,
             "definitions": {"step": {"type": "object", "properties": {"duration": {"type": "number", "maximum": 60}}}}}
            """))
        let document = try json(#"{"identifier": "", "steps": [{"duration": 5}, {"duration": 90}, "x"], "colour": 1}"#)
        let problems = schema.violations(of: document)
        #expect(problems.count == 4)
        #expect(problems.map(\.instanceLocation.description) == ["/colour", "/identifier", "/steps/1/duration", "/steps/2"])
        #expect(problems.map(\.keywordLocation.description) == [
            "/additionalProperties", "/properties/identifier/minLength", "/properties/steps/items/$ref/properties/duration/maximum",
            "/properties/steps/items/$ref/type",
        ])
        #expect(problems.map(\.message) == [
            "nothing is allowed here", "must be at least 1 characters long", "must be at most 60", "must be an object, not a string",
        ])
        #expect(!schema.isValid(document))
        #expect(schema.violations(of: document, limit: 2).count == 2)
        #expect(schema.violations(of: try json(#"{"identifier": "a", "steps": []}"#)).isEmpty)
    }

    /// Member names are matched by their Unicode scalars, as RFC 8259 compares them: a name
    /// canonically equal to another (`\u00e9` and `e\u0301`) is a different name.
    @Test func memberNamesAreMatchedByTheirScalars() throws {
        let composed = #"{"\u00e9": 1}"#
        let both = #"{"\u00e9": 1, "e\u0301": 2}"#
        #expect(!(try JSONSchema(json(#"{"required": ["e\u0301"]}"#)).isValid(try json(composed))))
        #expect(try JSONSchema(json(#"{"required": ["\u00e9"]}"#)).isValid(try json(composed)))
        #expect(!(try JSONSchema(json(#"{"maxProperties": 1}"#)).isValid(try json(both))))
        #expect(try JSONSchema(json(#"{"minProperties": 2}"#)).isValid(try json(both)))
        let closed = try JSONSchema(json(#"{"properties": {"\u00e9": {"type": "integer"}}, "additionalProperties": false}"#))
        #expect(closed.isValid(try json(composed)))
        #expect(closed.violations(of: try json(both)).map(\.instanceLocation.description) == ["/e\u{301}"])
        let typed = try JSONSchema(json(#"{"properties": {"e\u0301": {"type": "string"}}}"#))
        #expect(typed.isValid(try json(composed)), "the decomposed name's schema says nothing of the composed one")
        let dependent = try JSONSchema(json(#"{"dependencies": {"\u00e9": ["x"]}}"#))
        #expect(dependent.isValid(try json(#"{"e\u0301": 1}"#)))
        #expect(!dependent.isValid(try json(composed)))
        #expect(!(try JSONSchema(json(#"{"const": {"\u00e9": 1}}"#)).isValid(try json(#"{"e\u0301": 1}"#))))
        #expect(try JSONSchema(json(#"{"uniqueItems": true}"#)).isValid(try json(#"[{"\u00e9": 1}, {"e\u0301": 1}]"#)))
    }

    /// Numbers are compared and divided as the decimals they are written as, not as the doubles
    /// nearest them.
    @Test func numbersAreDecidedOnTheirExactDecimals() throws {
        func valid(_ schema: String, _ instance: String) throws -> Bool { try JSONSchema(json(schema)).isValid(json(instance)) }
        #expect(!(try valid(#"{"maximum": 9007199254740992}"#, "9007199254740993")))
        #expect(try valid(#"{"maximum": 9007199254740993}"#, "9007199254740993"))
        #expect(!(try valid(#"{"exclusiveMaximum": 9007199254740993}"#, "9007199254740993")))
        #expect(!(try valid(#"{"minimum": 9007199254740993}"#, "9007199254740992")))
        #expect(try valid(#"{"exclusiveMinimum": 0.1}"#, "0.10000000000000000001"))
        #expect(!(try valid(#"{"maximum": 0.1}"#, "0.10000000000000000001")))
        #expect(try valid(#"{"multipleOf": 0.0001}"#, "0.0075"))
        #expect(!(try valid(#"{"multipleOf": 0.0001}"#, "0.00751")))
        #expect(try valid(#"{"multipleOf": 1e-308}"#, "0.5"))
        #expect(try valid(#"{"multipleOf": 1e-308}"#, "1e-300"))
        #expect(!(try valid(#"{"multipleOf": 1e-300}"#, "1e-308")))
        #expect(try valid(#"{"multipleOf": 2.5}"#, "1e308"))
        #expect(!(try valid(#"{"maximum": 2.5}"#, "1e308")))
        #expect(try valid(#"{"multipleOf": 3}"#, "9007199254740993"), "its double, 9007199254740992, is not a multiple of 3")
        #expect(!(try valid(#"{"multipleOf": 3}"#, "9007199254740995")), "its double, 9007199254740996, is")
        #expect(!(try valid(#"{"type": "integer"}"#, "9007199254740993.5")))
        #expect(try valid(#"{"type": "integer"}"#, "1.0"))
        #expect(!(try valid(#"{"const": 9007199254740992}"#, "9007199254740993")))
        #expect(!(try valid(#"{"enum": [9007199254740992]}"#, "9007199254740993")))
        #expect(try valid(#"{"uniqueItems": true}"#, "[9007199254740992, 9007199254740993]"))
        #expect(!(try valid(#"{"uniqueItems": true}"#, "[1, 1.0]")))
        let problems = try JSONSchema(json(#"{"maximum": 9007199254740992}"#)).violations(of: json("9007199254740993"))
        #expect(problems.map(\.message) == ["must be at most 9007199254740992"])
    }

    @Test func requiredAndDependenciesNameTheMissingMember() throws {
        let schema = try JSONSchema(json(#"{"required": ["a"], "dependencies": {"b": ["c"]}}"#))
        let problems = schema.violations(of: try json(#"{"b": 1}"#))
        #expect(problems.map(\.message) == [#"the member "a" is required"#, #"the member "c" is required when "b" is present"#])
        #expect(problems.map(\.keywordLocation.description) == ["/required", "/dependencies/b"])
    }

    @Test func aSchemaThatCannotBeCompiledSaysWhereAndWhy() throws {
        let cases: [(schema: String, location: String, reason: String)] = [
            (#"{"maxLength": -1}"#, "/maxLength", "maxLength must be a whole number, 0 or more"),
            (#"{"properties": {"a": {"minItems": 1.5}}}"#, "/properties/a/minItems", "minItems must be a whole number, 0 or more"),
            (#"{"pattern": "a\\z"}"#, "/pattern", #"the pattern a\z cannot be used: \z is not an escape ECMA-262 defines"#),
            (#"{"type": "text"}"#, "/type", "type must name JSON types"),
            (#"{"multipleOf": 0}"#, "/multipleOf", "multipleOf must be greater than 0"),
            (#"{"allOf": []}"#, "/allOf", "allOf must be a non-empty array of schemas"),
            (#"{"items": 3}"#, "/items", "a schema must be an object or a boolean"),
            (#"{"$ref": "https://example.org/elsewhere.json"}"#, "/$ref",
             "https://example.org/elsewhere.json names no schema among the known documents (schemas are never fetched)"),
            (##"{"$ref": "#/definitions/missing"}"##, "/$ref", "#/definitions/missing names no schema among the known documents (schemas are never fetched)"),
        ]
        for (text, location, reason) in cases {
            #expect(throws: SchemaError(location: JSONPointer(location)!, reason: reason), "\(text)") { try JSONSchema(json(text)) }
        }
    }

    @Test func referencesThatGoRoundWithoutEndFailInsteadOfOverflowingTheStack() throws {
        let loops = [
            ##"{"$ref": "#"}"##,
            ##"{"definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"allOf": [{"$ref": "#/definitions/a"}]}}, "$ref": "#/definitions/a"}"##,
            ##"{"anyOf": [{"$ref": "#"}]}"##,
            ##"{"not": {"$ref": "#"}}"##,
        ]
        #expect(loops.count == 4)
        for text in loops {
            let schema = try JSONSchema(json(text))
            #expect(!schema.isValid(.null), "\(text)")
            let problems = schema.violations(of: .null)
            #expect(problems.contains { $0.message == "the schema refers to itself too deeply here to decide" } || problems.contains { $0.message.contains("anyOf") || $0.message.contains("not") }, "\(text)")
        }
    }

    @Test func theDeepestDocumentTheParserAcceptsValidatesAgainstARecursiveSchema() throws {
        let depth = JSONValue.maxDepth - 1
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        let document = try json(text)
        let schema = try JSONSchema(json(##"{"type": "array", "items": {"$ref": "#"}}"##))
        #expect(schema.isValid(document))
        #expect(schema.violations(of: document).isEmpty)
    }

    @Test func textIsComparedByUnicodeScalars() throws {
        // "é" precomposed and as e + combining acute: equal as Swift Strings, different JSON.
        let schema = try JSONSchema(.object(["enum": .array([.string("caf\u{E9}")]), "maxLength": .number(4)]))
        #expect(schema.isValid(.string("caf\u{E9}")))
        #expect(!schema.isValid(.string("cafe\u{301}")))
        let unique = try JSONSchema(json(#"{"uniqueItems": true}"#))
        #expect(unique.isValid(.array([.string("caf\u{E9}"), .string("cafe\u{301}")])))
        #expect(!unique.isValid(.array([.object(["a": .number(1), "b": .array([])]), .object(["b": .array([]), "a": .number(1.0)])])))
        // CR LF is one Character and two scalars.
        let lines = try JSONSchema(json(#"{"maxLength": 1}"#))
        #expect(!lines.isValid(.string("\r\n")))
    }

    @Test func uniqueItemsOverManyObjectsOfOneShapeFinishes() throws {
        let schema = try JSONSchema(json(#"{"uniqueItems": true}"#))
        let items = (0..<20_000).map { JSONValue.object(["id": .number(Double($0)), "kind": .string("step")]) }
        #expect(items.count == 20_000)
        #expect(schema.isValid(.array(items)))
        #expect(!schema.isValid(.array(items + [items[7]])))
    }

    @Test func patternsAreReadAsECMA262ReadsThem() throws {
        let cases: [(pattern: String, text: String, matches: Bool)] = [
            (#"^\d$"#, "\u{07C0}", false),  // NKO DIGIT ZERO is not \d in ECMA-262
            (#"^\w$"#, "\u{E9}", false),
            (#"^\s$"#, "\u{FEFF}", true),
            (#"^abc$"#, "abc\n", false),
            (#"^[\d]$"#, "7", true),
            (#"^[^\d]$"#, "7", false),
            (#"^[[]$"#, "[", true),
            (#"^[a&b]$"#, "&", true),
            (#"^\u{1F600}$"#, "\u{1F600}", true),
            (#"^[]$"#, "", false),
            (#"^[^]$"#, "\n", true),
            (#"^\cJ$"#, "\n", true),
        ]
        #expect(cases.count == 12)
        for (pattern, text, matches) in cases {
            let schema = try JSONSchema(.object(["pattern": .string(pattern)]))
            #expect(schema.isValid(.string(text)) == matches, "\(pattern) on \(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        for refused in [#"\a"#, "(?i)a", "(?#note)a", "[a", #"a\"#] {
            #expect(throws: SchemaError.self, "\(refused)") { try JSONSchema(.object(["pattern": .string(refused)])) }
        }
    }

    @Test func formatIsAnAnnotationUnlessAsserted() throws {
        let schema = try json(#"{"format": "date-time"}"#)
        #expect(try JSONSchema(schema).isValid(.string("yesterday")))
        let asserting = try JSONSchema(schema, assertsFormats: true)
        #expect(!asserting.isValid(.string("yesterday")))
        #expect(asserting.isValid(.string("2026-11-26T17:47:03Z")))
        #expect(!asserting.isValid(.string("2026-02-29T00:00:00Z")))
        #expect(asserting.violations(of: .string("x")).map(\.message) == ["must be a valid date-time"])
    }

    @Test func aReferenceCanNameADefinitionInsideAnotherDocument() throws {
        var documents = SchemaDocuments()
        documents.add(try json(#"{"$id": "https://example.org/schemas/Node.json", "definitions": {"Countdown": {"type": "object", "required": ["duration"]}}}"#),
                      at: "https://example.org/schemas/Node.json")
        let node = try JSONSchema(reference: "https://example.org/schemas/Node.json#/definitions/Countdown", documents: documents)
        #expect(node.isValid(try json(#"{"duration": 5}"#)))
        #expect(!node.isValid(try json(#"{}"#)))
        let assessment = try JSONSchema(json(#"{"items": {"$ref": "Node.json#/definitions/Countdown"}}"#),
                                        at: "https://example.org/schemas/Assessment.json", documents: documents)
        #expect(assessment.violations(of: try json(#"[{"duration": 1}, {}]"#)).map(\.keywordLocation.description) == ["/items/$ref/required"])
    }
}
