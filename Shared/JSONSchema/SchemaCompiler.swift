import JSONText

/// Turns schema documents into `CompiledNode`s. Each schema location is compiled once, however
/// many references lead to it; a reference becomes the index of its target, so recursive schemas
/// compile to a graph with no cycles of ownership.
struct SchemaCompiler {
    private let resources: SchemaResources
    private let assertsFormats: Bool
    private(set) var nodes: [CompiledNode] = []
    private var indexes: [SchemaLocation: Int] = [:]
    private var pending: [(index: Int, location: SchemaLocation, base: URIReference)] = []

    init(resources: SchemaResources, assertsFormats: Bool) {
        self.resources = resources
        self.assertsFormats = assertsFormats
    }

    /// Compiles the schema at `location` and everything it reaches; returns its node index.
    mutating func compile(_ location: SchemaLocation, base: URIReference) throws(SchemaError) -> Int {
        let root = node(for: location, outerBase: base)
        while let next = pending.popLast() {
            nodes[next.index] = try compileNode(at: next.location, base: next.base)
        }
        return root
    }

    /// The index of the node for `location`, allocated (and queued for compiling) on first use.
    private mutating func node(for location: SchemaLocation, outerBase: URIReference) -> Int {
        if let known = indexes[location] { return known }
        let index = nodes.count
        nodes.append(CompiledNode())
        indexes[location] = index
        pending.append((index, location, resources.base(at: location, outer: outerBase)))
        return index
    }

    private mutating func compileNode(at location: SchemaLocation, base: URIReference) throws(SchemaError) -> CompiledNode {
        guard let value = resources.value(at: location) else { throw SchemaError(location: location.pointer, reason: "there is no schema here") }
        switch value {
        case .bool(true): return CompiledNode()
        case .bool(false): return CompiledNode(keywords: [.never])
        case .object(let members): return CompiledNode(keywords: try keywords(of: members, at: location, base: base))
        default: throw SchemaError(location: location.pointer, reason: "a schema must be an object or a boolean")
        }
    }

    private mutating func keywords(of members: JSONObject, at location: SchemaLocation, base: URIReference) throws(SchemaError) -> [Keyword] {
        func fail(_ keyword: String, _ reason: String) -> SchemaError {
            SchemaError(location: location.pointer + [keyword], reason: reason)
        }
        if let reference = members["$ref"] {
            guard case .string(let text) = reference else { throw fail("$ref", "$ref must be a string") }
            guard let target = resources.resolve(text, against: base) else {
                throw fail("$ref", "\(text) names no schema among the known documents (schemas are never fetched)")
            }
            return [.reference(node(for: target, outerBase: base))]
        }
        var keywords: [Keyword] = []
        func schema(_ tokens: String...) -> Int {
            node(for: SchemaLocation(document: location.document, pointer: location.pointer + tokens), outerBase: base)
        }
        func schemaList(_ keyword: String) throws(SchemaError) -> [Int]? {
            guard let value = members[keyword] else { return nil }
            guard case .array(let items) = value, !items.isEmpty else { throw fail(keyword, "\(keyword) must be a non-empty array of schemas") }
            return items.indices.map { schema(keyword, String($0)) }
        }
        func number(_ keyword: String) throws(SchemaError) -> JSONNumber? {
            guard let value = members[keyword] else { return nil }
            guard case .number(let number) = value else { throw fail(keyword, "\(keyword) must be a number") }
            return number
        }
        func count(_ keyword: String) throws(SchemaError) -> Int? {
            guard let value = try number(keyword)?.double else { return nil }
            guard value >= 0, value.rounded(.towardZero) == value else { throw fail(keyword, "\(keyword) must be a whole number, 0 or more") }
            // A limit past what any document can reach means the same as the largest Int.
            return value < 9.0e18 ? Int(value) : Int.max
        }
        func pattern(_ text: String, _ keyword: String) throws(SchemaError) -> SchemaPattern {
            do { return try SchemaPattern(text) } catch { throw fail(keyword, "the pattern \(text) cannot be used: \(error.reason)") }
        }

        if let value = members["type"] {
            var types = JSONTypes()
            let names: [JSONValue]
            if case .array(let list) = value { names = list } else { names = [value] }
            for name in names {
                guard case .string(let text) = name, let type = JSONTypes(name: text) else { throw fail("type", "type must name JSON types") }
                types.insert(type)
            }
            keywords.append(.type(types))
        }
        if let value = members["enum"] {
            guard case .array(let options) = value else { throw fail("enum", "enum must be an array") }
            keywords.append(.enumeration(options))
        }
        if let value = members["const"] { keywords.append(.constant(value)) }
        if let divisor = try number("multipleOf") {
            guard !divisor.decimal.negative, !divisor.decimal.isZero else { throw fail("multipleOf", "multipleOf must be greater than 0") }
            keywords.append(.multipleOf(divisor))
        }
        if let limit = try number("maximum") { keywords.append(.maximum(limit)) }
        if let limit = try number("exclusiveMaximum") { keywords.append(.exclusiveMaximum(limit)) }
        if let limit = try number("minimum") { keywords.append(.minimum(limit)) }
        if let limit = try number("exclusiveMinimum") { keywords.append(.exclusiveMinimum(limit)) }
        if let limit = try count("maxLength") { keywords.append(.maxLength(limit)) }
        if let limit = try count("minLength") { keywords.append(.minLength(limit)) }
        if let value = members["pattern"] {
            guard case .string(let text) = value else { throw fail("pattern", "pattern must be a string") }
            keywords.append(.pattern(try pattern(text, "pattern")))
        }
        if assertsFormats, case .string(let name)? = members["format"], let format = StringFormat(rawValue: name) {
            keywords.append(.format(format))
        }
        switch members["items"] {
        case .array(let list)?:
            let additional = members["additionalItems"].map { _ in schema("additionalItems") }
            keywords.append(.tupleItems(list.indices.map { schema("items", String($0)) }, additional: additional))
        case .some: keywords.append(.items(schema("items")))
        case nil: break
        }
        if members["contains"] != nil { keywords.append(.contains(schema("contains"))) }
        if let limit = try count("maxItems") { keywords.append(.maxItems(limit)) }
        if let limit = try count("minItems") { keywords.append(.minItems(limit)) }
        if case .bool(true)? = members["uniqueItems"] { keywords.append(.uniqueItems) }
        if members["properties"] != nil || members["patternProperties"] != nil || members["additionalProperties"] != nil {
            var objectMembers = ObjectMembers(properties: [:], patterns: [], additional: nil)
            if let value = members["properties"] {
                guard case .object(let named) = value else { throw fail("properties", "properties must be an object") }
                for name in named.keys { objectMembers.properties[ScalarKey(name)] = schema("properties", name) }
            }
            if let value = members["patternProperties"] {
                guard case .object(let named) = value else { throw fail("patternProperties", "patternProperties must be an object") }
                for name in named.keys.sorted() {
                    objectMembers.patterns.append((try pattern(name, "patternProperties"), schema("patternProperties", name)))
                }
            }
            if members["additionalProperties"] != nil { objectMembers.additional = schema("additionalProperties") }
            keywords.append(.members(objectMembers))
        }
        if let value = members["required"] {
            guard case .array(let names) = value else { throw fail("required", "required must be an array of names") }
            var required: [String] = []
            for name in names {
                guard case .string(let text) = name else { throw fail("required", "required must be an array of names") }
                required.append(text)
            }
            if !required.isEmpty { keywords.append(.required(required)) }
        }
        if let value = members["dependencies"] {
            guard case .object(let named) = value else { throw fail("dependencies", "dependencies must be an object") }
            var dependencies: [(name: String, dependency: Dependency)] = []
            for (name, dependency) in named.sorted(by: { $0.key < $1.key }) {
                if case .array(let list) = dependency {
                    var names: [String] = []
                    for item in list {
                        guard case .string(let text) = item else { throw fail("dependencies", "a dependency list must hold names") }
                        names.append(text)
                    }
                    dependencies.append((name, .members(names)))
                } else {
                    dependencies.append((name, .schema(schema("dependencies", name))))
                }
            }
            keywords.append(.dependencies(dependencies))
        }
        if members["propertyNames"] != nil { keywords.append(.propertyNames(schema("propertyNames"))) }
        if let limit = try count("maxProperties") { keywords.append(.maxProperties(limit)) }
        if let limit = try count("minProperties") { keywords.append(.minProperties(limit)) }
        if let list = try schemaList("allOf") { keywords.append(.allOf(list)) }
        if let list = try schemaList("anyOf") { keywords.append(.anyOf(list)) }
        if let list = try schemaList("oneOf") { keywords.append(.oneOf(list)) }
        if members["not"] != nil { keywords.append(.not(schema("not"))) }
        if members["if"] != nil, members["then"] != nil || members["else"] != nil {
            keywords.append(.conditional(condition: schema("if"), then: members["then"].map { _ in schema("then") },
                                         otherwise: members["else"].map { _ in schema("else") }))
        }
        return keywords
    }
}

/// A schema that cannot be compiled: where in it, and why.
public struct SchemaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The JSON pointer, inside the schema document, of the keyword at fault.
    public var location: JSONPointer
    public var reason: String

    init(location: [String], reason: String) {
        self.location = JSONPointer(tokens: location)
        self.reason = reason
    }

    public init(location: JSONPointer, reason: String) {
        self.location = location
        self.reason = reason
    }

    public var description: String { "schema \(location.tokens.isEmpty ? "root" : location.description): \(reason)" }
}
