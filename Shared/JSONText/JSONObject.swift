/// A JSON object's members, keyed by their names' Unicode scalars (RFC 8259 compares member names
/// by code points). A `[String: JSONValue]` merges names that differ only in Unicode normalisation
/// (`{"\u00e9":1,"e\u0301":2}` would keep one member, an answer dropped without a word), because
/// Swift's `String` equality and hashing are canonical equivalence; keyed by `ScalarKey`, the two
/// stay two, as they are in PostgreSQL's jsonb and in the apps' parsers (docs/security.md, Text
/// compared by Unicode scalars). Reads and writes by a `String` name look the name up by its
/// scalars too.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: JSONValue)

    /// The members in the order they were first set: a resource is written in the order its
    /// mapping built it, and a parsed document in the order it was sent. Most objects have a few
    /// members, where a scan by length and bytes is cheaper than hashing each name; past
    /// `indexedFrom` members an index keeps a lookup constant, so that an object of many names
    /// (a hostile document's) is still read in linear time.
    private var members: [(name: ScalarKey, value: JSONValue)]
    private var index: [ScalarKey: Int]?
    static let indexedFrom = 16

    public init() {
        members = []
    }

    /// Members named by the platform's own code; a later duplicate name wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = []
        members.reserveCapacity(elements.count)
        for (name, value) in elements { self[name] = value }
    }

    /// The members of a dictionary the platform built itself (its names came through a `String`
    /// key already, so nothing outside is merged here).
    public init(_ dictionary: [String: JSONValue]) {
        members = []
        members.reserveCapacity(dictionary.count)
        for (name, value) in dictionary { append(ScalarKey(name), value) }
    }

    /// Members whose names are known to differ (the parser's, gathered and checked).
    init(uniqueMembers: [(name: ScalarKey, value: JSONValue)]) {
        members = uniqueMembers
        reindex()
    }

    /// Members in the order given, by their names' scalars; the first of a repeated name wins.
    public init(pairs: some Sequence<(String, JSONValue)>) {
        members = []
        members.reserveCapacity(pairs.underestimatedCount)
        for (name, value) in pairs {
            let key = ScalarKey(name)
            if position(of: key) == nil { append(key, value) }
        }
    }

    public subscript(name: String) -> JSONValue? {
        get { position(of: ScalarKey(name)).map { members[$0].value } }
        set { set(ScalarKey(name), newValue) }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    /// The names, in the members' order.
    public var keys: [String] { members.map(\.name.text) }
    /// The values, in the members' order.
    public var values: [JSONValue] { members.map(\.value) }

    @discardableResult
    public mutating func removeValue(forKey name: String) -> JSONValue? {
        let removed = self[name]
        if removed != nil { set(ScalarKey(name), nil) }
        return removed
    }

    public func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var mapped = self
        for position in mapped.members.indices { mapped.members[position].value = try transform(members[position].value) }
        return mapped
    }

    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var kept = JSONObject()
        for member in members where try isIncluded((member.name.text, member.value)) { kept.append(member.name, member.value) }
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
        members.lazy.map { (key: $0.name.text, value: $0.value) }.makeIterator()
    }

    /// Equal when they have the same names, by scalars, with equal values, in any order (as
    /// RFC 8259 objects are).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for member in lhs.members {
            guard let position = rhs.position(of: member.name), rhs.members[position].value == member.value else { return false }
        }
        return true
    }

    /// Order-independent, as `==` is: each member hashed alone and the hashes summed.
    public func hash(into hasher: inout Hasher) {
        var sum = 0
        for member in members {
            var alone = Hasher()
            alone.combine(member.name)
            alone.combine(member.value)
            sum &+= alone.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(sum)
    }

    private func position(of name: ScalarKey) -> Int? {
        if let index { return index[name] }
        return members.firstIndex { $0.name == name }
    }

    private mutating func set(_ name: ScalarKey, _ value: JSONValue?) {
        switch (position(of: name), value) {
        case (let position?, let value?):
            members[position].value = value
        case (let position?, nil):
            members.remove(at: position)
            if index != nil { reindex() }
        case (nil, let value?):
            append(name, value)
        case (nil, nil):
            break
        }
    }

    /// Adds a member whose name is not there yet.
    private mutating func append(_ name: ScalarKey, _ value: JSONValue) {
        members.append((name, value))
        if index != nil {
            index?[name] = members.count - 1
        } else if members.count >= Self.indexedFrom {
            reindex()
        }
    }

    private mutating func reindex() {
        guard members.count >= Self.indexedFrom else {
            index = nil
            return
        }
        var built = [ScalarKey: Int](minimumCapacity: members.count)
        for (position, member) in members.enumerated() { built[member.name] = position }
        index = built
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
