import JSONText

/// Where a schema sits: which document, and the JSON pointer to it inside that document.
struct SchemaLocation: Hashable, Sendable {
    var document: Int
    var pointer: [String]

    func appending(_ tokens: String...) -> SchemaLocation {
        SchemaLocation(document: document, pointer: pointer + tokens)
    }
}

/// Every document a schema may refer to, and the names (`$id`s, plain-name fragments) found in
/// them. Built once before compiling, so a `$ref` resolves to a location without fetching
/// anything: a name that is not here is an error, never a download.
struct SchemaResources {
    private(set) var documents: [JSONValue] = []
    /// A resource's absolute URI (without a fragment) to the schema that has it.
    private(set) var resources: [String: SchemaLocation] = [:]
    /// `base#name` for each plain-name `$id` ("#foo").
    private(set) var anchors: [String: SchemaLocation] = [:]
    /// The base URI in force inside each schema object the scan reached.
    private(set) var bases: [SchemaLocation: URIReference] = [:]

    /// Keywords whose value is one schema.
    static let singleSchemaKeywords: Set<String> = ["additionalItems", "additionalProperties", "contains", "propertyNames", "if", "then", "else", "not", "items"]
    /// Keywords whose value maps names to schemas (for `dependencies`, the object values only).
    static let schemaMapKeywords: Set<String> = ["properties", "patternProperties", "definitions", "dependencies"]
    /// Keywords whose value is an array of schemas (and `items` in its tuple form).
    static let schemaArrayKeywords: Set<String> = ["allOf", "anyOf", "oneOf", "items"]

    /// Adds a document under the URI it was retrieved from (or is known by), and indexes the
    /// names inside it. Returns its document number.
    @discardableResult
    mutating func add(_ document: JSONValue, retrievedFrom uri: URIReference) -> Int {
        let number = documents.count
        documents.append(document)
        let root = SchemaLocation(document: number, pointer: [])
        resources[uri.withoutFragment.text] = resources[uri.withoutFragment.text] ?? root
        scan(document, at: root, base: uri.withoutFragment)
        return number
    }

    func value(at location: SchemaLocation) -> JSONValue? {
        guard documents.indices.contains(location.document) else { return nil }
        return documents[location.document][pointer: JSONPointer(tokens: location.pointer)]
    }

    /// The base URI in force inside the schema at `location`: the scan's record, or (for a place
    /// the scan did not treat as a schema, reached by a pointer) the given outer base with the
    /// schema's own `$id` applied.
    func base(at location: SchemaLocation, outer: URIReference) -> URIReference {
        if let known = bases[location] { return known }
        guard let value = value(at: location) else { return outer }
        return Self.applyingID(of: value, to: outer).base
    }

    /// The location a `$ref` names, resolved against `base`.
    func resolve(_ reference: String, against base: URIReference) -> SchemaLocation? {
        let target = URIReference(reference).resolved(against: base)
        let documentURI = target.withoutFragment.text
        guard let fragment = target.fragment, !fragment.isEmpty else { return resources[documentURI] }
        if fragment.unicodeScalars.first == "/" {
            guard let root = resources[documentURI], let decoded = Self.percentDecoded(fragment), let pointer = JSONPointer(decoded) else { return nil }
            let location = SchemaLocation(document: root.document, pointer: root.pointer + pointer.tokens)
            return value(at: location) == nil ? nil : location
        }
        return anchors[documentURI + "#" + fragment]
    }

    /// The base after a schema's `$id`, and the plain name it declares, if any. In draft-07 a
    /// `$ref` replaces every keyword beside it, `$id` included.
    static func applyingID(of value: JSONValue, to base: URIReference) -> (base: URIReference, anchor: String?) {
        guard case .object(let members) = value, members["$ref"] == nil, case .string(let id)? = members["$id"] else { return (base, nil) }
        let resolved = URIReference(id).resolved(against: base)
        let anchor = resolved.fragment.flatMap { $0.isEmpty || $0.unicodeScalars.first == "/" ? nil : $0 }
        return (resolved.withoutFragment, anchor)
    }

    private mutating func scan(_ value: JSONValue, at location: SchemaLocation, base outer: URIReference) {
        guard case .object(let members) = value else { return }
        let (base, anchor) = Self.applyingID(of: value, to: outer)
        if base != outer || location.pointer.isEmpty {
            resources[base.text] = resources[base.text] ?? location
        }
        if let anchor { anchors[base.text + "#" + anchor] = location }
        bases[location] = base
        for (keyword, child) in members {
            if Self.singleSchemaKeywords.contains(keyword), !(keyword == "items" && isArray(child)) {
                scan(child, at: location.appending(keyword), base: base)
            } else if Self.schemaArrayKeywords.contains(keyword), case .array(let items) = child {
                for (index, item) in items.enumerated() { scan(item, at: location.appending(keyword, String(index)), base: base) }
            } else if Self.schemaMapKeywords.contains(keyword), case .object(let named) = child {
                for (name, item) in named { scan(item, at: location.appending(keyword, name), base: base) }
            }
        }
    }

    private func isArray(_ value: JSONValue) -> Bool {
        if case .array = value { return true }
        return false
    }

    /// A URI fragment's percent-encoding undone (as UTF-8), or nil when it is malformed.
    static func percentDecoded(_ text: String) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
