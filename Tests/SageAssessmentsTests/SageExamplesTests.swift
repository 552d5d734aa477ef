import Foundation
import JSONSchema
import JSONText
import SageAssessments
import StudyModels
import Testing

/// Sage's own files (`Tests/Fixtures/sage/`, provenance in `Tests/Fixtures/PROVENANCE.md`) as the
/// mended, type-dispatched schemas read them.
@Suite struct SageExamplesTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/sage")

    static func parse(_ url: URL) throws -> JSONValue { try JSONValue.parse(Array(try Data(contentsOf: url)), budget: .studyDocument) }

    /// Every official example, as (schema file, definition, example file).
    static func examples() throws -> [(file: String, definition: String, url: URL)] {
        let root = fixtures.appendingPathComponent("examples/v2")
        var found: [(String, String, URL)] = []
        for folder in try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() {
            let directory = root.appendingPathComponent(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where name.hasSuffix(".json") {
                let definition = String(name.dropLast(5).split(separator: "_").dropLast().joined(separator: "_"))
                found.append((folder + ".json", definition, directory.appendingPathComponent(name)))
            }
        }
        return found
    }

    @Test func everyOfficialExampleIsValidAgainstItsFileAndItsDefinition() throws {
        let schemas = try SageSchemaSet.bundled()
        let examples = try Self.examples()
        #expect(examples.count == 69)
        var failures: [String] = []
        for (file, definition, url) in examples {
            let document = try Self.parse(url)
            let problems = try schemas.schema(file: file).violations(of: document)
            if !problems.isEmpty { failures.append("\(url.lastPathComponent) against \(file): \(problems)") }
            // The definition itself, where the file's root is not it (the dispatch picks it by type).
            if definition != file.dropLast(5) {
                let definitionSchema = try JSONSchema(reference: SageSchemaSet.publishedBase + file + "#/definitions/" + definition, documents: schemas.documents)
                let direct = definitionSchema.violations(of: document)
                if !direct.isEmpty { failures.append("\(url.lastPathComponent) against \(definition): \(direct)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func withoutTheFixesTheOfficialInputItemExamplesFail() throws {
        let published = try Self.parse(Self.fixtures.appendingPathComponent("schemas/v2/TextInputItem.json"))
        let unmended = try JSONSchema(published, at: SageSchemaSet.publishedBase + "TextInputItem.json")
        let inputs = try Self.examples().filter { $0.file == "TextInputItem.json" }
        #expect(inputs.count == 6)
        for input in inputs { #expect(!unmended.isValid(try Self.parse(input.url)), "\(input.url.lastPathComponent)") }
    }

    @Test func theReadmeSurveyIsValidWithTheTwoWarningsItEarns() throws {
        let schemas = try SageSchemaSet.bundled()
        let survey = try Self.parse(Self.fixtures.appendingPathComponent("README-extract/README_ExampleSurvey.json"))
        let check = AssessmentCheck.check(survey, schemas: schemas)
        #expect(check.errors.isEmpty, "\(check.errors)")
        #expect(check.warnings.map(\.pointer) == ["/steps/1/choices/3/value", "/steps/1/surveyRules/4/matchingAnswer"])
        #expect(check.warnings.first?.message == "is the value of an earlier choice too: the answers cannot tell them apart")
    }
}
