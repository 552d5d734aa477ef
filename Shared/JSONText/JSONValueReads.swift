/// Typed reads of a value, for documents read field by field (a protocol or an assessment is
/// checked before it is trusted, so nothing is decoded into types wholesale).
extension JSONValue {
    public var string: String? { if case .string(let text) = self { text } else { nil } }
    public var nonEmptyString: String? { string.flatMap { $0.isEmpty ? nil : $0 } }
    public var bool: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    public var isBool: Bool { bool != nil }
    public var number: Double? { if case .number(let value) = self { value.double } else { nil } }
    public var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    public var object: JSONObject? { if case .object(let members) = self { members } else { nil } }
    /// A whole number of at most 15 digits (JSON has one number type; 2.5 is not one, and a
    /// number past what a double holds exactly is not read as one).
    public var integer: Int? {
        guard case .number(let number) = self, number.isExactDouble, number.double.rounded() == number.double,
            abs(number.double) < 1e15
        else { return nil }
        return Int(number.double)
    }
    /// The value as a list of strings, when it is one.
    public var stringArray: [String]? {
        guard let items = array else { return nil }
        let strings = items.compactMap(\.string)
        return strings.count == items.count ? strings : nil
    }
}
