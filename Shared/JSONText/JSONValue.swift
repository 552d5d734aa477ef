/// Any JSON value, for the few places where the wire format is open-ended (fields of the
/// original servers' survey extensions that StudyStack carries through without interpreting).
public enum JSONValue: Codable, Sendable, Hashable {
    case null
    case bool(Bool)
    /// Its `Double` and its exact decimal (`JSONNumber`).
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    /// Members keyed by their names' Unicode scalars (`JSONObject`).
    case object(JSONObject)

    public init(from decoder: any Decoder) throws {
        // Spent before the value is built: a decoder with a budget stops at the first value past it.
        let budget = decoder.userInfo[JSONValueDecodingBudget.key] as? JSONValueDecodingBudget
        try budget?.spend(decoder.codingPath)
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            // Foundation's decoder gives the Double only: documents read through it are the
            // platform's own shapes, whose numbers a double holds.
            self = .number(JSONNumber(value))
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            // An array whose elements ran past the budget fails as one; the budget says why.
            try budget?.checkNotExhausted(decoder.codingPath)
            // Foundation's decoder keys an object's members by `String` before this sees them:
            // documents read through it are ones whose names the platform defines (a study
            // document, an upload request); participants' answers go through `parse`.
            self = .object(JSONObject(try container.decode([String: JSONValue].self)))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if case .object(let members) = self {
            var keyed = encoder.container(keyedBy: MemberName.self)
            for (name, value) in members { try keyed.encode(value, forKey: MemberName(name)) }
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let number):
            // Whole numbers go out without a fraction, as the originals wrote them.
            let value = number.double
            if value.rounded() == value, abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object: break
        }
    }

    /// The text of a string value, or the decimal text of a number.
    public var text: String? {
        switch self {
        case .string(let value): value
        // A whole number as digits; one too large for 64 bits (1e300) as Swift prints a double;
        // one a double does not hold exactly, as its exact decimal.
        case .number(let number):
            number.isExactDouble ? Int64(exactly: number.double).map { String($0) } ?? String(number.double) : number.description
        case .bool(let value): String(value)
        default: nil
        }
    }

    /// A member of an object value (nil for anything else).
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}

/// A member name as a coding key, for writing an object's members one by one.
private struct MemberName: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
