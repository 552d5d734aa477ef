import Foundation
import StudyModels
import Testing
import TestSupport

/// The schema app's own demo protocols against the checks of what the app needs
/// (docs/schema-protocols.md), and the mistakes a protocol's author makes.
@Suite struct SchemaProtocolCheckTests {
    static func fixture(_ path: String) throws -> Data {
        try Data(contentsOf: Conformance.root.appendingPathComponent("schema/\(path)"))
    }

    @Test func theCurrentDemoProtocolIsValidWithOneWarningItsTimeout() throws {
        let check = SchemaProtocolCheck.check(text: try Self.fixture("demo_protocol.json"))
        #expect(check.errors.isEmpty, "\(check.errors)")
        try #require(check.warnings.count == 1, "\(check.warnings)")
        #expect(check.warnings[0].pointer == "/modules/1/alerts/timeout_after")
        #expect(check.warnings[0].message.hasPrefix("is 30 ms: the app reads it in milliseconds"))
        // Nothing needed writing again.
        #expect(check.normalized == (try JSONValue.parse(try Self.fixture("demo_protocol.json"), budget: .studyDocument)))
    }

    @Test func theVersion1DemoImportsWithItsMultisGivenModalAndItsLossesNamed() throws {
        let check = SchemaProtocolCheck.check(text: try Self.fixture("v1.0/demo_protocol.json"))
        #expect(check.errors.isEmpty, "\(check.errors)")
        let byPointer = Dictionary(grouping: check.warnings, by: \.pointer)
        // The multi questions had no modal: the current app would draw no options.
        let modal = check.warnings.filter { $0.pointer.hasSuffix("/modal") }
        #expect(modal.map(\.pointer) == ["/modules/1/sections/0/questions/2/modal", "/modules/2/sections/0/questions/5/modal"])
        #expect(check.normalized?[pointer: try #require(JSONPointer("/modules/1/sections/0/questions/2/modal"))] == .bool(false))
        // unwind_q1..3 twice in one module: the later answers overwrite the earlier.
        let repeated = check.warnings.filter { $0.message.contains("is already a question of this module") }
        #expect(repeated.map(\.pointer) == [
            "/modules/1/sections/1/questions/0/id", "/modules/1/sections/1/questions/1/id", "/modules/1/sections/1/questions/2/id",
        ])
        // No module has a uuid; ethics and pls are missing.
        #expect((0..<4).allSatisfy { byPointer["/modules/\($0)/uuid"]?.count == 1 })
        #expect(byPointer["/properties/ethics"] != nil && byPointer["/properties/pls"] != nil)
        #expect(check.warnings.count == modal.count + repeated.count + 4 + 2, "\(check.warnings)")
    }

    @Test func textThatIsNotJSONIsOneClearError() throws {
        let check = SchemaProtocolCheck.check(text: Array(#"{"properties": {"study_id": "X"}, "modules": [}"#.utf8))
        try #require(check.errors.count == 1)
        #expect(check.errors[0].pointer == "")
        #expect(check.errors[0].message.hasPrefix("the protocol is not valid JSON: not JSON at byte"))
        #expect(check.normalized == nil)
    }

    /// One mistake at a time in the current demo, each reported where it is.
    @Test(arguments: [
        ("/properties/study_id", JSONValue.string(""), "/properties/study_id"),
        ("/properties/conditions", .null, "/properties/conditions"),
        ("/properties/post_url", .string("ftp://example.org/post"), "/properties/post_url"),
        ("/modules/0/alerts", .null, "/modules/0/alerts"),
        ("/modules/0/graph", .null, "/modules/0/graph"),
        ("/modules/1/graph/variable", .string("nothing-here"), "/modules/1/graph/variable"),
        ("/modules/1/alerts/times/0/hours", .number(24), "/modules/1/alerts/times/0"),
        ("/modules/1/alerts/random_interval", .number(2.5), "/modules/1/alerts/random_interval"),
        ("/modules/1/sections/0/questions/0/type", .string("rating"), "/modules/1/sections/0/questions/0/type"),
        ("/modules/0/uuid", .string("dup"), "/modules/1/uuid"),
    ] as [(String, JSONValue, String)])
    func aBrokenFieldIsAnErrorAtItsPointer(field: String, value: JSONValue, expected: String) throws {
        var document = try JSONValue.parse(try Self.fixture("demo_protocol.json"), budget: .studyDocument)
        if field == "/modules/0/uuid" {
            // Two modules with one uuid.
            try document.set(.string("dup"), at: JSONPointer("/modules/0/uuid")!)
            try document.set(.string("dup"), at: JSONPointer("/modules/1/uuid")!)
        } else {
            // .null stands for the field taken away.
            try document.set(value == .null ? nil : value, at: JSONPointer(field)!)
        }
        let check = SchemaProtocolCheck.check(document)
        #expect(check.errors.map(\.pointer).contains(expected), "\(field): \(check.errors)")
    }

    @Test func branchingOnAQuestionThatIsNotThereOrCannotTriggerIsAWarning() throws {
        var document = try JSONValue.parse(try Self.fixture("demo_protocol.json"), budget: .studyDocument)
        let questions = Self.questions(document, module: 1)
        let instruction = try #require(questions.first { $0.type == "instruction" })
        try document.set(.string("nobody"), at: JSONPointer("/modules/1\(instruction.pointer)/hide_id")!)
        var check = SchemaProtocolCheck.check(document)
        #expect(check.warnings.contains { $0.pointer == "/modules/1\(instruction.pointer)/hide_id" && $0.message.contains("not a question of this module") })
        let media = try #require(questions.first { $0.type == "media" })
        try document.set(.string(media.id), at: JSONPointer("/modules/1\(instruction.pointer)/hide_id")!)
        check = SchemaProtocolCheck.check(document)
        #expect(check.warnings.contains { $0.message.contains("only multi, yesno, text and slider answers show or hide others") })
    }

    /// Each question of module `module`: its pointer below the module, type and id.
    static func questions(_ document: JSONValue, module: Int) -> [(pointer: String, type: String, id: String)] {
        guard case .array(let modules)? = document["modules"], case .array(let sections)? = modules[module]["sections"] else { return [] }
        var found: [(String, String, String)] = []
        for (s, section) in sections.enumerated() {
            guard case .array(let questions)? = section["questions"] else { continue }
            for (q, question) in questions.enumerated() {
                found.append(("/sections/\(s)/questions/\(q)", question["type"]?.text ?? "", question["id"]?.text ?? ""))
            }
        }
        return found
    }
}
