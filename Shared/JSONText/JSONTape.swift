import Foundation

/// A JSON text checked and indexed where it lies, for a reader that walks it once and builds
/// little of it (an export writing each stored response as another document): one pass records
/// where each value starts and ends, and a value is decoded only when it is read. The values a
/// reader passes over are never built, and the tape's storage is kept from one text to the next,
/// so indexing a text allocates nothing once the tape has grown to its size.
///
/// The checks and the budget are `JSONValue.parse`'s, by the same reader: a text it refuses is
/// refused here, and each value or member name is one entry as it is one node there.
public struct JSONTape: Sendable {
    public enum Kind: UInt8, Sendable {
        case object, array, string, number, bool, null
    }

    struct Entry: Sendable {
        var kind: Kind
        /// A string written with escapes, which reading it decodes.
        var escaped: Bool
        /// A string's text within its quotes, a number's or a literal's text, a container's
        /// brackets.
        var start: Int
        var end: Int
        /// The entry after this value and everything within it.
        var next: Int
    }

    private var entries: [Entry] = []

    public init() {}

    /// Indexes `bytes`, one JSON value surrounded by nothing but whitespace, within `budget`, and
    /// reads it with `body`. The value and what is read from it are valid only within `body`.
    public mutating func read<Result>(
        _ bytes: some Collection<UInt8>, budget: JSONValue.Budget, _ body: (Value) -> Result
    ) throws(JSONValue.ParseError) -> Result {
        guard bytes.count <= budget.maxBytes else {
            throw JSONValue.ParseError(offset: 0, reason: "larger than \(budget.maxBytes) bytes", overBudget: true)
        }
        entries.removeAll(keepingCapacity: true)
        return try JSONValue.withContiguous(bytes) { buffer in
            Swift.Result { () throws(JSONValue.ParseError) in
                var parser = JSONValue.Parser(bytes: buffer, budget: budget)
                parser.skipWhitespace()
                try parser.record(depth: 0, into: &entries)
                parser.skipWhitespace()
                guard parser.index == buffer.count else { throw parser.error("unexpected text after the value") }
                return entries.withUnsafeBufferPointer { body(Value(bytes: buffer, entries: $0, at: 0)) }
            }
        }.get()
    }

    /// One value of an indexed text, read where it lies.
    public struct Value {
        let bytes: UnsafeBufferPointer<UInt8>
        let entries: UnsafeBufferPointer<Entry>
        let at: Int

        private var entry: Entry { entries[at] }

        public var kind: Kind { entry.kind }

        /// A string, a number, a boolean or null built as a `JSONValue` (what `JSONValue.parse`
        /// makes of it); nil for an object or an array.
        public var scalar: JSONValue? {
            switch entry.kind {
            case .object, .array: nil
            case .null: .null
            case .bool: .bool(bytes[entry.start] == UInt8(ascii: "t"))
            case .string: string.map(JSONValue.string)
            case .number: number.map(JSONValue.number)
            }
        }

        /// The value built whole, as `JSONValue.parse` builds it (of a name written twice, the
        /// later value, in the first's place).
        public var jsonValue: JSONValue {
            switch entry.kind {
            case .array: return .array(items.map(\.jsonValue))
            case .object:
                var object = JSONObject()
                for member in members { object[member.name.string ?? ""] = member.value.jsonValue }
                return .object(object)
            default: return scalar ?? .null
            }
        }

        /// A string's text, its escapes decoded.
        public var string: String? {
            let entry = entry
            guard entry.kind == .string else { return nil }
            let text = UnsafeBufferPointer(rebasing: bytes[entry.start..<entry.end])
            guard entry.escaped else { return String(decoding: text, as: UTF8.self) }
            // Decoded by the reader that checked it, from its opening quote.
            var parser = JSONValue.Parser(bytes: bytes, budget: JSONValue.Budget(maxBytes: bytes.count, maxNodes: 1))
            parser.index = entry.start - 1
            return try? parser.string()
        }

        public var number: JSONNumber? {
            let entry = entry
            guard entry.kind == .number else { return nil }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[entry.start..<entry.end]), as: UTF8.self)
            // The reader checked its grammar and its range.
            return Double(text).map { JSONNumber(checkedText: text, double: $0) }
        }

        /// The value as `JSONValue.text` gives it: a string, or a number or boolean as text.
        public var text: String? { scalar?.text }

        /// Whether the value is a string of at least one character (an escape is one).
        public var isNonEmptyString: Bool { entry.kind == .string && entry.end > entry.start }

        /// Whether the value is the literal `true`.
        public var isTrue: Bool { entry.kind == .bool && bytes[entry.start] == UInt8(ascii: "t") }

        /// Whether the value is a string whose text is `literal`, compared by its bytes (so by
        /// its Unicode scalars).
        public func isString(_ literal: StaticString) -> Bool {
            let entry = entry
            guard entry.kind == .string else { return false }
            let count = literal.utf8CodeUnitCount
            guard entry.escaped else {
                // Most names are not the one looked for, and differ in length.
                guard entry.end - entry.start == count, let base = bytes.baseAddress else { return false }
                return memcmp(base + entry.start, literal.utf8Start, count) == 0
            }
            return string.map { $0.utf8.elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: count)) } ?? false
        }

        /// An array's items, in order; none for any other value.
        public var items: Children { Children(value: self, step: 1) }

        /// An object's members, in the order they were written (a name written twice is there
        /// twice); none for any other value.
        public var members: Members { Members(children: Children(value: self, step: 2)) }

        /// The member of an object named `name`; of a name written twice, the later, as
        /// `JSONValue.parse` keeps it.
        public func member(_ name: StaticString) -> Value? {
            var found: Value?
            for member in members where member.name.isString(name) { found = member.value }
            return found
        }

        /// A string, number, boolean or null as `JSONValue.write` writes it; a string needing no
        /// escapes is copied as it lies. Nothing for an object or an array.
        public func writeScalar(to out: inout [UInt8]) {
            let entry = entry
            if entry.kind == .string, !entry.escaped {
                // Checked: no quote, backslash or control character, which is all that writing
                // escapes.
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[entry.start..<entry.end]))
                out.append(UInt8(ascii: "\""))
            } else {
                scalar?.write(to: &out, sortedKeys: false)
            }
        }

        /// The values within an array or an object, one after another.
        public struct Children: Sequence, IteratorProtocol {
            let value: Value
            /// 1 for an array's items; 2 for an object's names and values, taken in pairs.
            let step: Int
            private var position: Int
            private let end: Int

            init(value: Value, step: Int) {
                self.value = value
                self.step = step
                let entry = value.entries[value.at]
                let container = step == 1 ? Kind.array : Kind.object
                position = value.at + 1
                end = entry.kind == container ? entry.next : position
            }

            public mutating func next() -> Value? {
                guard position < end else { return nil }
                let child = Value(bytes: value.bytes, entries: value.entries, at: position)
                position = value.entries[position].next
                return child
            }
        }

        public struct Members: Sequence, IteratorProtocol {
            var children: Children

            public mutating func next() -> (name: Value, value: Value)? {
                guard let name = children.next(), let value = children.next() else { return nil }
                return (name, value)
            }
        }
    }
}

extension JSONValue.Parser {
    /// Checks one value as `value(depth:)` does and records it on `tape` rather than building it.
    mutating func record(depth: Int, into tape: inout [JSONTape.Entry]) throws(JSONValue.ParseError) {
        guard depth < budget.maxDepth else { throw overBudget("nested more than \(budget.maxDepth) deep") }
        guard index < bytes.count else { throw error("unexpected end") }
        try count()
        let at = tape.count
        let start = index
        func leaf(_ kind: JSONTape.Kind) {
            tape.append(JSONTape.Entry(kind: kind, escaped: false, start: start, end: index, next: at + 1))
        }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let isObject = bytes[index] == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            tape.append(JSONTape.Entry(kind: isObject ? .object : .array, escaped: false, start: start, end: start, next: at + 1))
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == close {
                index += 1
            } else {
                while true {
                    skipWhitespace()
                    if isObject {
                        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                        try count()
                        try recordString(into: &tape)
                        try colon()
                    }
                    try record(depth: depth + 1, into: &tape)
                    guard try continues(closing: close, else: isObject ? "expected ',' or '}'" : "expected ',' or ']'") else { break }
                }
            }
            tape[at].end = index
            tape[at].next = tape.count
        case UInt8(ascii: "\""): try recordString(into: &tape)
        case UInt8(ascii: "t"):
            try literal("true")
            leaf(.bool)
        case UInt8(ascii: "f"):
            try literal("false")
            leaf(.bool)
        case UInt8(ascii: "n"):
            try literal("null")
            leaf(.null)
        default:
            _ = try numberText()
            leaf(.number)
        }
    }

    /// Checks the string at `index` and records its text within the quotes.
    private mutating func recordString(into tape: inout [JSONTape.Entry]) throws(JSONValue.ParseError) {
        let opening = index
        let escaped = try skipString()
        tape.append(JSONTape.Entry(kind: .string, escaped: escaped, start: opening + 1, end: index - 1, next: tape.count + 1))
    }
}
