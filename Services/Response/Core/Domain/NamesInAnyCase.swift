import JSONText

/// A study's tables or a table's columns by name: in any case, as LabKey matched list and column
/// names, and otherwise by the name's Unicode scalars. A `[String: …]` keyed by the lower-cased
/// name would also make one name of two that differ only in Unicode normalisation (`\u{e9}` and
/// `e\u{301}`), so that an answer under one went to the other's column and one of two answers was
/// overwritten without a word; PostgreSQL's identifiers, like the apps, keep them apart
/// (docs/security.md, Text compared by Unicode scalars). An answer under a name no column has is
/// refused by name instead.
package struct NamesInAnyCase<Value: Sendable>: Sendable, ExpressibleByDictionaryLiteral {
    private var byName: [ScalarKey: Value] = [:]

    package init() {}

    package init(dictionaryLiteral elements: (String, Value)...) {
        for (name, value) in elements { self[name] = value }
    }

    package subscript(name: String) -> Value? {
        get { byName[ScalarKey(name.lowercased())] }
        set { byName[ScalarKey(name.lowercased())] = newValue }
    }

    package var values: Dictionary<ScalarKey, Value>.Values { byName.values }
    package var count: Int { byName.count }
    package var isEmpty: Bool { byName.isEmpty }
}
