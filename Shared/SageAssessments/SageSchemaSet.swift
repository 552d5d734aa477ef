import Foundation
import JSONSchema
import JSONText

/// Sage's published v2 schemas, mended (`SageSchemaFixes`) and compiled once: the validators an
/// assessment, a result archive's `assessmentResult.json` and its `metadata.json` are checked
/// with. Every reference between the files resolves to the copies shipped in this library's
/// `Schemas/` folder; nothing is fetched.
public struct SageSchemaSet: Sendable {
    /// The address the files are published under (their `$id`s); the newer host is accepted too
    /// in an assessment's `$schema`.
    public static let publishedBase = "https://sage-bionetworks.github.io/mobile-client-json/schemas/v2/"
    public static let schemaHosts = ["sage-bionetworks.github.io", "bridgedigitalhealth.github.io"]

    public let assessment: JSONSchema
    public let assessmentResult: JSONSchema
    public let archiveMetadata: JSONSchema
    /// Node types the schemas define (`section`, `choiceQuestion`, …) and input item types.
    public let nodeTypes: [String]
    public let inputItemTypes: [String]
    private let files: JSONObject
    /// Every mended file, by its published address (for compiling a definition of one).
    public let documents: SchemaDocuments

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The schemas shipped with this library.
    public static func bundled() throws -> SageSchemaSet {
        guard let folder = Bundle.module.url(forResource: "Schemas", withExtension: nil) else {
            throw LoadError(description: "the Sage schema files are missing beside the executable (the SageAssessments resource bundle)")
        }
        var files: JSONObject = [:]
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        for name in names {
            do {
                files[name] = try JSONValue.parse(Array(try Data(contentsOf: folder.appendingPathComponent(name))), budget: .activityDocument)
            } catch {
                throw LoadError(description: "the Sage schema \(name) cannot be read: \(error)")
            }
        }
        return try SageSchemaSet(files: files)
    }

    /// Compiles the files given by name (as published: `Node.json`, …).
    public init(files published: JSONObject) throws {
        var files = published
        SageSchemaFixes.apply(to: &files)
        var documents = SchemaDocuments()
        for (name, document) in files { documents.add(document, at: Self.publishedBase + name) }
        assessment = try Self.compile("AssessmentObject.json", files, documents)
        assessmentResult = try Self.compile("AssessmentResultObject.json", files, documents)
        archiveMetadata = try Self.compile("ArchiveMetadata.json", files, documents)
        nodeTypes = SageSchemaFixes.memberTypes(of: "Node.json", in: files)
        inputItemTypes = SageSchemaFixes.memberTypes(of: "TextInputItem.json", in: files)
        self.files = files
        self.documents = documents
    }

    /// The mended schema of one file (`Node.json`, …), compiled; for a family's file (a node, an
    /// input item, an image, …), the dispatch that checks a value against its kind's definition.
    public func schema(file name: String) throws -> JSONSchema {
        guard SageSchemaFixes.polymorphicFiles.contains(name) else { return try Self.compile(name, files, documents) }
        let reference = Self.publishedBase + name + "#/definitions/" + SageSchemaFixes.dispatchDefinition
        do {
            return try JSONSchema(reference: reference, documents: documents, assertsFormats: true)
        } catch {
            throw LoadError(description: "the Sage schema \(reference) does not compile: \(error)")
        }
    }

    private static func compile(_ name: String, _ files: JSONObject, _ documents: SchemaDocuments) throws -> JSONSchema {
        guard let document = files[name] else { throw LoadError(description: "the Sage schema \(name) is missing") }
        do {
            return try JSONSchema(document, at: publishedBase + name, documents: documents, assertsFormats: true)
        } catch {
            throw LoadError(description: "the Sage schema \(name) does not compile: \(error)")
        }
    }
}
