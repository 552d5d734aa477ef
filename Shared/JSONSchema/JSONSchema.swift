import JSONText

/// A draft-07 JSON Schema, compiled once into a validator value.
///
/// ```swift
/// var documents = SchemaDocuments()
/// try documents.add(nodeSchema, at: "https://example.org/schemas/Node.json")
/// let schema = try JSONSchema(assessmentSchema, at: "https://example.org/schemas/Assessment.json", documents: documents)
/// let problems = schema.violations(of: document)   // [] when it conforms
/// ```
///
/// References (`$ref`) resolve against `$id` base URIs, JSON pointers, plain-name fragments and
/// the other documents given; a reference to anything else is a `SchemaError` when compiling,
/// never a download. Validation cannot trap: references that loop without going deeper into the
/// instance end the evaluation, as a failure, at `SchemaEvaluator.maxDepth`.
public struct JSONSchema: Sendable {
    private let evaluator: SchemaEvaluator
    private let root: Int

    /// Compiles `schema`, known by `uri` (its `$id`, if it has one, takes precedence for
    /// resolving references), with `documents` for the references between files.
    /// `assertsFormats` makes `format` an assertion for the formats `StringFormat` knows;
    /// draft-07 leaves `format` an annotation unless asked.
    public init(_ schema: JSONValue, at uri: String = "urn:studystack:schema", documents: SchemaDocuments = SchemaDocuments(),
                assertsFormats: Bool = false) throws(SchemaError) {
        var resources = documents.resources
        let base = URIReference(uri)
        let document = resources.add(schema, retrievedFrom: base)
        var compiler = SchemaCompiler(resources: resources, assertsFormats: assertsFormats)
        root = try compiler.compile(SchemaLocation(document: document, pointer: []), base: base.withoutFragment)
        evaluator = SchemaEvaluator(nodes: compiler.nodes)
    }

    /// Compiles the schema a JSON pointer fragment names inside one of `documents`
    /// (`https://…/Node.json#/definitions/ChoiceQuestionStepObject`).
    public init(reference: String, documents: SchemaDocuments, assertsFormats: Bool = false) throws(SchemaError) {
        let resources = documents.resources
        guard let location = resources.resolve(reference, against: URIReference("")) else {
            throw SchemaError(location: [], reason: "\(reference) names no schema among the known documents")
        }
        var compiler = SchemaCompiler(resources: resources, assertsFormats: assertsFormats)
        root = try compiler.compile(location, base: URIReference(reference).withoutFragment)
        evaluator = SchemaEvaluator(nodes: compiler.nodes)
    }

    /// Whether `pattern` is an ECMA-262 regular expression this validator can use (for checking
    /// patterns a document carries for the apps, as Sage's `regExValidator`).
    public static func isValidPattern(_ pattern: String) -> Bool {
        (try? SchemaPattern(pattern)) != nil
    }

    /// Whether `instance` conforms. Stops at the first failure and records nothing.
    public func isValid(_ instance: JSONValue) -> Bool {
        var probe = FirstFailure()
        return evaluator.run(instance, node: root, into: &probe)
    }

    /// Every way `instance` fails (up to `limit`), in a stable order; empty when it conforms.
    public func violations(of instance: JSONValue, limit: Int = 100) -> [SchemaViolation] {
        var report = FailureReport(limit: max(1, limit))
        _ = evaluator.run(instance, node: root, into: &report)
        return report.failures
    }
}

/// The schema documents references may reach, each under the URI it is known by. Nothing is
/// ever fetched: a document a schema needs is added here from a local copy.
public struct SchemaDocuments: Sendable {
    var resources = SchemaResources()

    public init() {}

    /// Adds `document`, known by `uri` (the address it is published at); its `$id`s are indexed
    /// too.
    public mutating func add(_ document: JSONValue, at uri: String) {
        resources.add(document, retrievedFrom: URIReference(uri))
    }
}

