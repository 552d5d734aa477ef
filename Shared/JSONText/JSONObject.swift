/// A JSON object's members, keyed by their names' Unicode scalars (RFC 8259 compares member names
/// by code points). A `[String: JSONValue]` merges names that differ only in Unicode normalisation
/// (`{"\u00e9":1,"e\u0301":2}` would keep one member, an answer dropped without a word), because
/// Swift's `String` equality and hashing are canonical equivalence; keyed by `ScalarKey`, the two
/// stay two, as they are in PostgreSQL's jsonb and in the apps' parsers (docs/security.md, Text
/// compared by Unicode scalars). Reads and writes by a `String` name look the name up by its
/// scalars too.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    private var members: [ScalarKey: JSONValue]

    public init() {
        members = [:]
    }

    /// Members named by the platform's own code; a later duplicate name wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = [:]
        for (name, value) in elements { members[ScalarKey(name)] = value }
    }

    /// The members of a dictionary the platform built itself (its names came through a `String`
    /// key already, so nothing outside is merged here).
    public init(_ dictionary: [String: JSONValue]) {
        members = Dictionary(uniqueKeysWithValues: dictionary.map { (ScalarKey($0.key), $0.value) })
    }

    /// Members in the order given, by their names' scalars; the first of a repeated name wins.
    public init(pairs: some Sequence<(String, JSONValue)>) {
        members = [:]
        for (name, value) in pairs where members[ScalarKey(name)] == nil { members[ScalarKey(name)] = value }
    }

    public subscript(name: String) -> JSONValue? {
        get { members[ScalarKey(name)] }
        set { members[ScalarKey(name)] = newValue }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// The names, in no particular order.
    public var keys: [String] { members.keys.map(\.text) }
    public var values: Dictionary<ScalarKey, JSONValue>.Values { members.values }

    @discardableResult
    public mutating func removeValue(forKey name: String) -> JSONValue? {
        members.removeValue(forKey: ScalarKey(name))
    }

    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var mapped = JSONObject()
        mapped.members = try members.mapValues(transform)
        return mapped
    }

    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var kept = JSONObject()
        kept.members = try members.filter { try isIncluded(($0.key.text, $0.value)) }
        return kept
    }

    /// The members as a `String`-keyed dictionary of what `transform` makes of each value (nil
    /// leaves the member out), for names the platform defines (property keys, a call's
    /// parameters). Two names that differ only in Unicode normalisation would be one `String`
    /// key: the whole is then refused (nil), never merged.
    public func stringKeyed<T>(_ transform: (JSONValue) throws -> T?) rethrows -> [String: T]? {
        var keyed: [String: T] = [:]
        var names = Set<String>()
        for (name, value) in members {
            guard names.insert(name.text).inserted else { return nil }
            if let transformed = try transform(value) { keyed[name.text] = transformed }
        }
        return keyed
    }

    public func makeIterator() -> some IteratorProtocol<Element> {
        members.lazy.map { (key: $0.key.text, value: $0.value) }.makeIterator()
    }
}

extension JSONObject: Codable {
    /// Through Foundation's decoder, whose members are keyed by `String` before this sees them
    /// (docs/security.md, Text compared by Unicode scalars): for documents whose names the
    /// platform defines; participants' answers are read with `JSONValue.parse`.
    public init(from decoder: any Decoder) throws {
        guard case .object(let members) = try JSONValue(from: decoder) else {
            throw DecodingError.typeMismatch(
                JSONObject.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a JSON object"))
        }
        self = members
    }

    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(self).encode(to: encoder)
    }
}
