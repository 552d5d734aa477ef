import Foundation
import JSONSchema
import JSONText
import Testing

/// The official JSON-Schema-Test-Suite's draft7 directory, every case (provenance and licence:
/// `Tests/Fixtures/PROVENANCE.md`). A required case must pass; an optional case must pass unless
/// `TestSuite.knownOptionalFailures` lists it with a reason, and a listed case must really fail,
/// so the list cannot go stale.
@Suite struct TestSuiteTests {
    @Test func everyRequiredCasePasses() throws {
        let files = try TestSuite.files(optional: false)
        #expect(files.count == 37)
        var outcome = TestSuite.Outcome()
        for file in files { try TestSuite.run(file, into: &outcome) }
        #expect(outcome.cases > 800, "the suite's draft7 directory had \(outcome.cases) cases")
        #expect(outcome.failures.isEmpty, "\(outcome.failures.count) of \(outcome.cases) failed:\n\(outcome.failures.joined(separator: "\n"))\n\(outcome.notes.joined(separator: "\n"))")
    }

    @Test func optionalCasesPassOrAreListedWithAReason() throws {
        let files = try TestSuite.files(optional: true)
        #expect(files.count == 27)
        var outcome = TestSuite.Outcome()
        for file in files { try TestSuite.run(file, into: &outcome, assertsFormats: file.path.contains("/format/")) }
        #expect(outcome.cases > 500)
        let unexpected = outcome.failures.filter { !TestSuite.isListed($0) }
        #expect(unexpected.isEmpty, "failing without a listed reason:\n\(unexpected.joined(separator: "\n"))\n\(outcome.notes.joined(separator: "\n"))")
        let stale = TestSuite.knownOptionalFailures.keys.filter { key in !outcome.failures.contains { TestSuite.covers(key, $0) } }
        #expect(stale.isEmpty, "listed as failing but passing:\n\(stale.sorted().joined(separator: "\n"))")
    }
}

enum TestSuite {
    struct Outcome {
        var cases = 0
        /// "file: group / case" for each case whose result differed from the suite's.
        var failures: [String] = []
        /// Schemas that did not compile, with the reason.
        var notes: [String] = []
    }

    /// Optional cases this validator does not pass, each with the reason. A key is a file, a
    /// file and group ("file: group"), or one case ("file: group / case"); every failing case must
    /// fall under a key, and every key must cover at least one failing case.
    static let knownOptionalFailures: [String: String] = [
        "optional/content.json": "contentMediaType and contentEncoding are annotations in draft-07; this validator does not assert them (nor does Python's jsonschema)",
        "optional/cross-draft.json": "the case refers to a draft 2019-09 document; this validator implements draft-07 only",
        "optional/format/ecmascript-regex.json: ECMA 262 lookbehind is valid, including variable width":
            "ICU, which NSRegularExpression uses, refuses lookbehind of unbounded length",
        "optional/format/idn-hostname.json": "idn-hostname is not asserted: IDNA2008's tables are not reachable here without a library",
        "optional/format/hostname.json: validation of A-label (punycode) host names":
            "A-labels are not decoded, so IDNA2008's rules for what they decode to are not applied",
    ]

    static func isListed(_ failure: String) -> Bool { knownOptionalFailures.keys.contains { covers($0, failure) } }

    static func covers(_ key: String, _ failure: String) -> Bool {
        failure == key || failure.hasPrefix(key + ": ") || failure.hasPrefix(key + " / ")
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/json-schema-test-suite")
    }

    static func files(optional: Bool) throws -> [URL] {
        let directory = root.appendingPathComponent(optional ? "draft7/optional" : "draft7")
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        var found: [URL] = []
        for case let url as URL in walker where url.pathExtension == "json" {
            let inOptional = url.path.contains("/draft7/optional/")
            if inOptional == optional { found.append(url) }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The suite's remote documents, as its runner serves them on http://localhost:1234/, and
    /// the draft-07 meta-schema that some cases refer to.
    static let documents: SchemaDocuments = {
        var documents = SchemaDocuments()
        let remotes = root.appendingPathComponent("remotes")
        if let walker = FileManager.default.enumerator(at: remotes, includingPropertiesForKeys: nil) {
            for case let url as URL in walker where url.pathExtension == "json" {
                let relative = String(url.path.dropFirst(remotes.path.count + 1))
                if let value = try? parse(url) { documents.add(value, at: "http://localhost:1234/" + relative) }
            }
        }
        if let meta = try? parse(root.appendingPathComponent("metaschema/draft-07.json")) {
            documents.add(meta, at: "http://json-schema.org/draft-07/schema")
        }
        return documents
    }()

    static func parse(_ url: URL) throws -> JSONValue {
        try JSONValue.parse(Array(try Data(contentsOf: url)), budget: JSONValue.Budget(maxBytes: 1 << 26, maxNodes: 1 << 22))
    }

    static func run(_ url: URL, into outcome: inout Outcome, assertsFormats: Bool = false) throws {
        guard case .array(let groups) = try parse(url) else { throw SuiteError.notAGroupList(url.lastPathComponent) }
        let name = url.path.components(separatedBy: "/draft7/").last ?? url.lastPathComponent
        for group in groups {
            guard case .string(let groupName)? = group["description"], let schemaValue = group["schema"],
                case .array(let cases)? = group["tests"] else { throw SuiteError.notAGroupList(name) }
            let schema: JSONSchema?
            do {
                schema = try JSONSchema(schemaValue, documents: documents, assertsFormats: assertsFormats)
            } catch {
                schema = nil
                outcome.notes.append("\(name): \(groupName): \(error)")
            }
            for testCase in cases {
                guard case .string(let caseName)? = testCase["description"], let data = testCase["data"],
                    case .bool(let expected)? = testCase["valid"] else { throw SuiteError.notAGroupList(name) }
                outcome.cases += 1
                let key = "\(name): \(groupName) / \(caseName)"
                guard let schema else {
                    outcome.failures.append(key)
                    continue
                }
                let valid = schema.isValid(data)
                let reported = schema.violations(of: data)
                // The two paths must agree: a report is empty exactly when the check passes.
                if valid != expected || reported.isEmpty != valid { outcome.failures.append(key) }
            }
        }
    }

    enum SuiteError: Error {
        case notAGroupList(String)
    }
}
