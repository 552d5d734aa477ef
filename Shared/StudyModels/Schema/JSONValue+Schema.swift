import JSONText

/// Typed reads of a protocol's values: the schema app's JSON is read field by field, since a
/// protocol is checked before it is trusted.
extension JSONValue {
    var string: String? { if case .string(let text) = self { text } else { nil } }
    var nonEmptyString: String? { string.flatMap { $0.isEmpty ? nil : $0 } }
    var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    var isBool: Bool { bool != nil }
    var number: Double? { if case .number(let value) = self { value } else { nil } }
    var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    /// A whole number (JSON has one number type; 2.5 is not one).
    var integer: Int? {
        guard case .number(let value) = self, value.rounded() == value, abs(value) < 1e15 else { return nil }
        return Int(value)
    }
    /// The value as a list of strings, when it is one.
    var stringArray: [String]? {
        guard let items = array else { return nil }
        let strings = items.compactMap(\.string)
        return strings.count == items.count ? strings : nil
    }
}
