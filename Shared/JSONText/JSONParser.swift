/// The reader behind `JSONValue.parse` and `JSONValue.members(ofObject:)`: one pass over the
/// bytes, every read bounded by the text's end, and every value counted against a budget.
extension JSONValue {
    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        let budget: Budget
        /// Values and member names built so far.
        var nodes = 0
        /// The members and items of the objects and arrays being read, innermost last: each is
        /// gathered here and then made once at its size, rather than grown an element at a time
        /// (an allocation and a copy at every doubling).
        var pendingMembers: [(name: ScalarKey, value: JSONValue)] = []
        var pendingItems: [JSONValue] = []

        init(bytes: UnsafeBufferPointer<UInt8>, budget: Budget) {
            self.bytes = bytes
            self.budget = budget
        }

        /// Counts one more value or member name against the budget: what a value costs in memory
        /// is far more than its text (an object is a hash table), so the count, not the bytes,
        /// bounds what a small text can make a process hold.
        mutating func count() throws(ParseError) {
            nodes += 1
            guard nodes <= budget.maxNodes else { throw overBudget("more than \(budget.maxNodes) values") }
        }

        func error(_ reason: String) -> ParseError { ParseError(offset: index, reason: reason) }
        func overBudget(_ reason: String) -> ParseError { ParseError(offset: index, reason: reason, overBudget: true) }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        /// Past the `:` after a member's name, and the whitespace around it.
        mutating func colon() throws(ParseError) {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
        }

        /// After a member or an item: past a comma, true (the object or array goes on); past its
        /// `close`, false; anything else is refused with `reason`.
        mutating func continues(closing close: UInt8, else reason: String) throws(ParseError) -> Bool {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                return true
            }
            guard bytes[index] == close else { throw error(reason) }
            index += 1
            return false
        }

        mutating func value(depth: Int) throws(ParseError) -> JSONValue {
            guard depth < budget.maxDepth else { throw overBudget("nested more than \(budget.maxDepth) deep") }
            guard index < bytes.count else { throw error("unexpected end") }
            try count()
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: return .number(try number())
            }
        }

        /// Checks one value and moves past it without building it.
        mutating func skip(depth: Int) throws(ParseError) {
            guard depth < budget.maxDepth else { throw overBudget("nested more than \(budget.maxDepth) deep") }
            guard index < bytes.count else { throw error("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = bytes[index] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                let isObject = close == UInt8(ascii: "}")
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == close {
                    index += 1
                    return
                }
                while true {
                    skipWhitespace()
                    if isObject {
                        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                        try skipString()
                        try colon()
                    }
                    try skip(depth: depth + 1)
                    guard try continues(closing: close, else: "expected ',' or a closing bracket") else { return }
                }
            case UInt8(ascii: "\""): try skipString()
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: _ = try numberText()
            }
        }

        /// Checks a string (escapes, surrogates, no raw control characters) without building it,
        /// and says whether it has escapes.
        @discardableResult
        mutating func skipString() throws(ParseError) -> Bool {
            let opening = index
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return false
                }
                if byte == UInt8(ascii: "\\") {
                    // Escapes are rare: the building reader checks them, from this string's start.
                    index = opening
                    _ = try string()
                    return true
                }
                guard byte >= 0x20 else { throw error("control character in a string") }
                index += 1
            }
            throw error("unterminated string")
        }

        mutating func literal(_ word: StaticString) throws(ParseError) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw error("unexpected end") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                throw error("unknown literal")
            }
            index += count
        }

        mutating func object(depth: Int) throws(ParseError) -> JSONValue {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(JSONObject())
            }
            let base = pendingMembers.count
            defer { pendingMembers.removeSubrange(base...) }
            // An object of many members is built as one, with its index, so that each name is
            // still looked up in constant time; a later duplicate name wins, in the first's place.
            var large: JSONObject?
            func add(_ name: String, _ value: JSONValue) {
                if large != nil {
                    large?[name] = value
                    return
                }
                let key = ScalarKey(name)
                if let at = pendingMembers[base...].firstIndex(where: { $0.name == key }) {
                    pendingMembers[at].value = value
                    return
                }
                pendingMembers.append((key, value))
                if pendingMembers.count - base >= JSONObject.indexedFrom {
                    large = JSONObject(uniqueMembers: Array(pendingMembers[base...]))
                    pendingMembers.removeSubrange(base...)
                }
            }
            func made() -> JSONValue {
                .object(large ?? JSONObject(uniqueMembers: Array(pendingMembers[base...])))
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                try count()
                let key = try string()
                try colon()
                add(key, try value(depth: depth + 1))
                guard try continues(closing: UInt8(ascii: "}"), else: "expected ',' or '}'") else { return made() }
            }
        }

        mutating func array(depth: Int) throws(ParseError) -> JSONValue {
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array([])
            }
            let base = pendingItems.count
            defer { pendingItems.removeSubrange(base...) }
            while true {
                skipWhitespace()
                let item = try value(depth: depth + 1)
                pendingItems.append(item)
                guard try continues(closing: UInt8(ascii: "]"), else: "expected ',' or ']'") else {
                    return .array(Array(pendingItems[base...]))
                }
            }
        }

        mutating func string() throws(ParseError) -> String {
            index += 1
            let start = index
            // Fast path: no escapes.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                guard byte >= 0x20 else { throw error("control character in a string") }
                index += 1
            }
            var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw error("unexpected end") }
                    let escaped = bytes[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                            else { throw error("unpaired surrogate") }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw error("unpaired surrogate")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid escape") }
                        out += Array(String(Character(unicode)).utf8)
                    default:
                        throw error("invalid escape")
                    }
                default:
                    guard byte >= 0x20 else { throw error("control character in a string") }
                    out.append(byte)
                    index += 1
                }
            }
            throw error("unterminated string")
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("unexpected end") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("invalid \\u escape")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// A number read whole: its double and its exact decimal.
        mutating func number() throws(ParseError) -> JSONNumber {
            let (text, double) = try numberText()
            return JSONNumber(checkedText: text, double: double)
        }

        /// A number's text, checked (its grammar, and a double's range) but not built: what a
        /// skipped value needs.
        mutating func numberText() throws(ParseError) -> (text: String, double: Double) {
            let start = index
            func digits() -> Int {
                let from = index
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
                return index - from
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let leading = index
            guard digits() > 0 else { throw error("unexpected character") }
            if bytes[leading] == UInt8(ascii: "0") && index - leading > 1 { throw error("leading zero") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw error("digits expected after '.'") }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw error("digits expected in the exponent") }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            // Past a double's range: refused (docs/security.md, Numbers as they were sent).
            guard let value = Double(text), value.isFinite else { throw error("number out of range") }
            return (text, value)
        }
    }
}
