/// JSON text to `JSONValue` and back without going through `Codable`: the hot paths (every
/// submitted response is read, re-written in canonical form and hashed) cannot afford
/// `JSONDecoder`'s try-each-type decoding of an open-ended value, which throws and discards an
/// error for every guess.
extension JSONValue {
    /// Why text is not JSON, or is more than its budget allows, with the byte offset where
    /// reading stopped.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var offset: Int
        public var reason: String
        /// The text may be JSON, but it is larger, deeper or holds more values than what it is
        /// may (its `Budget`).
        public var overBudget: Bool

        public init(offset: Int, reason: String, overBudget: Bool = false) {
            self.offset = offset
            self.reason = reason
            self.overBudget = overBudget
        }

        public var description: String {
            overBudget ? "more than this text may hold, at byte \(offset): \(reason)" : "not JSON at byte \(offset): \(reason)"
        }
    }

    /// What one text may make the parser build, set by what the text is (a manifest, a survey's
    /// answers, a study document): a text past any of the three is refused before it can make a
    /// process hold more than its budget allows. Bytes bound the text, nodes (values and member
    /// names) bound what is built from it, depth bounds the stack.
    public struct Budget: Sendable, Equatable, CustomStringConvertible {
        public var maxBytes: Int
        public var maxNodes: Int
        public var maxDepth: Int

        public init(maxBytes: Int, maxNodes: Int, maxDepth: Int = JSONValue.maxDepth) {
            self.maxBytes = maxBytes
            self.maxNodes = maxNodes
            self.maxDepth = min(maxDepth, JSONValue.maxDepth)
        }

        public var description: String { "\(maxBytes) bytes, \(maxNodes) values, \(maxDepth) deep" }
    }

    /// Nesting deeper than this is refused whatever the budget, rather than allowed to exhaust
    /// the stack.
    public static let maxDepth = 256

    /// Parses one JSON value (RFC 8259), surrounded by nothing but whitespace, within `budget`.
    public static func parse(_ bytes: some Collection<UInt8>, budget: Budget) throws(ParseError) -> JSONValue {
        var budget = budget
        return try parse(bytes, sharing: &budget)
    }

    /// Parses one value within what is left of `budget`, and takes the nodes it built from it:
    /// several texts of one request (an envelope's members) share one budget.
    public static func parse(_ bytes: some Collection<UInt8>, sharing budget: inout Budget) throws(ParseError) -> JSONValue {
        let (value, nodes) = try read(bytes, within: budget)
        budget.maxNodes -= nodes
        return value
    }

    /// The one reading behind every `parse`: the value, and the nodes it built.
    private static func read(_ bytes: some Collection<UInt8>, within budget: Budget) throws(ParseError) -> (value: JSONValue, nodes: Int) {
        guard bytes.count <= budget.maxBytes else {
            throw ParseError(offset: 0, reason: "larger than \(budget.maxBytes) bytes", overBudget: true)
        }
        return try withContiguous(bytes) { buffer in
            Result { () throws(ParseError) in
                var parser = Parser(bytes: buffer, budget: budget)
                parser.skipWhitespace()
                let value = try parser.value(depth: 0)
                parser.skipWhitespace()
                guard parser.index == buffer.count else { throw parser.error("unexpected text after the value") }
                return (value, parser.nodes)
            }
        }.get()
    }

    /// `body` over the bytes where they are, when they are in one piece (a database row's
    /// buffer), or over a copy.
    static func withContiguous<R>(_ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = bytes.withContiguousStorageIfAvailable(body) { return result }
        return Array(bytes).withUnsafeBufferPointer(body)
    }

    /// The members of a JSON object, each with the byte range of its value in `bytes`: the whole
    /// text is checked, but no value is built, so a large member (a response's answers) can be
    /// passed on as the text it arrived as.
    /// Member names count against `budget`'s nodes; the values are checked, not built, so only
    /// its bytes and depth bound them.
    public static func members(
        ofObject bytes: UnsafeBufferPointer<UInt8>, budget: Budget
    ) throws(ParseError) -> [(name: String, value: Range<Int>)] {
        guard bytes.count <= budget.maxBytes else {
            throw ParseError(offset: 0, reason: "larger than \(budget.maxBytes) bytes", overBudget: true)
        }
        var parser = Parser(bytes: bytes, budget: budget)
        parser.skipWhitespace()
        guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "{") else { throw parser.error("expected an object") }
        parser.index += 1
        var members: [(name: String, value: Range<Int>)] = []
        parser.skipWhitespace()
        if parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "}") {
            parser.index += 1
        } else {
            while true {
                parser.skipWhitespace()
                guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "\"") else {
                    throw parser.error("expected a member name")
                }
                try parser.count()
                let name = try parser.string()
                try parser.colon()
                let start = parser.index
                try parser.skip(depth: 1)
                members.append((name, start..<parser.index))
                guard try parser.continues(closing: UInt8(ascii: "}"), else: "expected ',' or '}'") else { break }
            }
        }
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the value") }
        return members
    }

    /// Compact JSON text. With `sortedKeys`, object members are ordered by their keys' UTF-8
    /// bytes, so equal values always give the same text (what a fingerprint needs). Whole numbers
    /// below 10^15 are written without a fraction, as `encode(to:)` writes them.
    public func serialized(sortedKeys: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out, sortedKeys: sortedKeys)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact JSON text to `out` (what `serialized` returns), for replies written
    /// piece by piece.
    public func write(to out: inout [UInt8], sortedKeys: Bool = true) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let number):
            let value = number.double
            if !number.isExactDouble {
                // As written, in its shortest exact form: a double would change it.
                out.append(contentsOf: number.description.utf8)
            } else if value.rounded() == value, abs(value) < 1e15 {
                out.append(contentsOf: String(Int64(value)).utf8)
            } else {
                out.append(contentsOf: value.description.utf8)
            }
        case .string(let value): Self.writeString(value, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out, sortedKeys: sortedKeys)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            var first = true
            func write(_ member: JSONObject.Element) {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out, sortedKeys: sortedKeys)
            }
            // Unsorted, the members are written as they are held, with no array made of them.
            if sortedKeys {
                for member in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) { write(member) }
            } else {
                for member in members { write(member) }
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Appends `value` as a JSON string, quoted and escaped.
    public static func writeString(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most text needs no escaping: copied whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            out.append(contentsOf: value.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue.Budget {
    /// A small reply from a peer or a third party (a push service's error, an OAuth token): read
    /// from at most 64 KiB, it names a handful of fields.
    public static let peerReply = JSONValue.Budget(maxBytes: 64 << 10, maxNodes: 4_096, maxDepth: 32)

    /// One value the platform wrote itself and reads back from its own database (a column's
    /// `to_json`, a string's escapes): never more than the text holds, and no more nodes than a
    /// small list of dates.
    public static func storedValue(bytes: Int) -> JSONValue.Budget {
        JSONValue.Budget(maxBytes: bytes, maxNodes: 4_096, maxDepth: 32)
    }
}

extension JSONValue.Budget {
    /// The parameters of one call, as a JSON object body (an app's envelope, a LabKey client's
    /// query, a schema app's form fields): tens of named fields, whose large members (a
    /// response's answers) are read under their own budget.
    public static func requestParameters(maxBytes: Int) -> JSONValue.Budget {
        JSONValue.Budget(maxBytes: maxBytes, maxNodes: 65_536, maxDepth: 64)
    }
}
