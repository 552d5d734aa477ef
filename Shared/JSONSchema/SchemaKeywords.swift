import Foundation
import JSONText

/// One schema object compiled: its keywords in the order they are checked, each holding what it
/// needs ready (numbers read, patterns compiled, subschemas as indexes into the compiled list).
struct CompiledNode: Sendable {
    var keywords: [Keyword] = []
}

/// A draft-07 assertion keyword, compiled. Annotations (`title`, `default`, `examples`,
/// `$comment`, `contentMediaType`, …) and unknown keywords compile to nothing.
enum Keyword: Sendable {
    /// The `false` schema: nothing is valid.
    case never
    /// `$ref`: in draft-07 it replaces every keyword beside it.
    case reference(Int)
    case type(JSONTypes)
    case enumeration([JSONValue])
    case constant(JSONValue)
    /// Numbers compared and divided exactly, as decimals (`JSONNumber`): 9007199254740993 is
    /// more than 9007199254740992, and 0.0075 is a multiple of 0.0001.
    case multipleOf(JSONNumber)
    case maximum(JSONNumber)
    case exclusiveMaximum(JSONNumber)
    case minimum(JSONNumber)
    case exclusiveMinimum(JSONNumber)
    case maxLength(Int)
    case minLength(Int)
    case pattern(SchemaPattern)
    case format(StringFormat)
    /// `items` as one schema, for every item.
    case items(Int)
    /// `items` as an array of schemas, with `additionalItems` for the items past them.
    case tupleItems([Int], additional: Int?)
    case contains(Int)
    case maxItems(Int)
    case minItems(Int)
    case uniqueItems
    /// `properties`, `patternProperties` and `additionalProperties` together, as the last needs
    /// the first two to know which members are additional.
    case members(ObjectMembers)
    case required([String])
    case dependencies([(name: String, dependency: Dependency)])
    case propertyNames(Int)
    case maxProperties(Int)
    case minProperties(Int)
    case allOf([Int])
    case anyOf([Int])
    case oneOf([Int])
    case not(Int)
    case conditional(condition: Int, then: Int?, otherwise: Int?)

    /// The keyword's name, the token that keyword locations carry.
    var name: String {
        switch self {
        case .never: ""
        case .reference: "$ref"
        case .type: "type"
        case .enumeration: "enum"
        case .constant: "const"
        case .multipleOf: "multipleOf"
        case .maximum: "maximum"
        case .exclusiveMaximum: "exclusiveMaximum"
        case .minimum: "minimum"
        case .exclusiveMinimum: "exclusiveMinimum"
        case .maxLength: "maxLength"
        case .minLength: "minLength"
        case .pattern: "pattern"
        case .format: "format"
        case .items, .tupleItems: "items"
        case .contains: "contains"
        case .maxItems: "maxItems"
        case .minItems: "minItems"
        case .uniqueItems: "uniqueItems"
        case .members: "properties"
        case .required: "required"
        case .dependencies: "dependencies"
        case .propertyNames: "propertyNames"
        case .maxProperties: "maxProperties"
        case .minProperties: "minProperties"
        case .allOf: "allOf"
        case .anyOf: "anyOf"
        case .oneOf: "oneOf"
        case .not: "not"
        case .conditional: "if"
        }
    }
}

struct ObjectMembers: Sendable {
    /// By the names' Unicode scalars, as instance members are matched (RFC 8259).
    var properties: [ScalarKey: Int]
    var patterns: [(pattern: SchemaPattern, node: Int)]
    var additional: Int?
}

enum Dependency: Sendable {
    case members([String])
    case schema(Int)
}

/// The JSON types a `type` keyword allows.
struct JSONTypes: OptionSet, Sendable {
    let rawValue: UInt8
    static let null = JSONTypes(rawValue: 1)
    static let boolean = JSONTypes(rawValue: 2)
    static let object = JSONTypes(rawValue: 4)
    static let array = JSONTypes(rawValue: 8)
    static let number = JSONTypes(rawValue: 16)
    static let string = JSONTypes(rawValue: 32)
    static let integer = JSONTypes(rawValue: 64)

    static let names: [(String, JSONTypes)] = [
        ("null", .null), ("boolean", .boolean), ("object", .object), ("array", .array), ("number", .number),
        ("string", .string), ("integer", .integer),
    ]

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init?(name: String) {
        guard let found = Self.names.first(where: { $0.0 == name }) else { return nil }
        self = found.1
    }

    /// Whether a value is of one of these types. A number with no fraction is an integer, as
    /// draft-07 says (1.0 is an integer), decided on its exact decimal (9007199254740993.5 is not).
    func admits(_ value: JSONValue) -> Bool {
        switch value {
        case .null: contains(.null)
        case .bool: contains(.boolean)
        case .object: contains(.object)
        case .array: contains(.array)
        case .string: contains(.string)
        case .number(let number): contains(.number) || (contains(.integer) && number.isWhole)
        }
    }

    var description: String {
        let named = Self.names.filter { contains($0.1) }.map(\.0)
        return named.count == 1 ? "a\(named[0] == "object" || named[0] == "array" || named[0] == "integer" ? "n" : "") \(named[0])"
            : "one of the types " + named.joined(separator: ", ")
    }
}

/// A compiled `pattern`, with its source for messages. `NSRegularExpression` is immutable once
/// made and documented as safe to share between threads.
final class SchemaPattern: @unchecked Sendable {
    let source: String
    private let expression: NSRegularExpression

    init(_ source: String) throws(ECMARegex.TranslationError) {
        self.source = source
        let translated = try ECMARegex.icuPattern(for: source)
        guard let expression = try? NSRegularExpression(pattern: translated, options: []) else {
            throw ECMARegex.TranslationError(reason: "it is not a regular expression this validator can compile")
        }
        self.expression = expression
    }

    /// Whether the pattern matches somewhere in `text` (patterns are not anchored).
    func matches(_ text: String) -> Bool {
        expression.firstMatch(in: text, options: [], range: NSRange(location: 0, length: text.utf16.count)) != nil
    }
}

/// JSON equality as JSON Schema defines it: numbers by value (1 equals 1.0), strings and member
/// names by their Unicode scalars. Swift's `String ==` would call "é" and "e\u{301}" equal
/// (canonical equivalence); `enum`, `const` and `uniqueItems` must not.
struct ExactJSON: Hashable {
    let value: JSONValue

    static func == (left: ExactJSON, right: ExactJSON) -> Bool { same(left.value, right.value) }

    func hash(into hasher: inout Hasher) { Self.hash(value, into: &hasher) }

    static func same(_ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            // Member names as written (`JSONObject` looks names up by their scalars): a name
            // only canonically equal to another is a different name.
            return a.allSatisfy { name, value in b[name].map { same(value, $0) } ?? false }
        default: return false
        }
    }

    private static func hashBytes(of text: String, into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        for byte in text.utf8 { hasher.combine(byte) }
    }

    private static func hash(_ value: JSONValue, into hasher: inout Hasher) {
        switch value {
        case .null: hasher.combine(0)
        case .bool(let flag): hasher.combine(flag)
        case .number(let number): hasher.combine(number)
        case .string(let text): hashBytes(of: text, into: &hasher)
        case .array(let items): hasher.combine(items.count); items.forEach { hash($0, into: &hasher) }
        case .object(let members):
            // Members in any order: each member hashed alone, and the hashes summed.
            var total = 0
            for (name, member) in members {
                var memberHasher = Hasher()
                hashBytes(of: name, into: &memberHasher)
                hash(member, into: &memberHasher)
                total &+= memberHasher.finalize()
            }
            hasher.combine(members.count)
            hasher.combine(total)
        }
    }
}
