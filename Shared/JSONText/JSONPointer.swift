/// A JSON Pointer (RFC 6901): `/activities/0/steps/2/key`. The admin API locates every problem
/// with one, and the console names its form fields with them, so a problem finds its field.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    public let tokens: [String]

    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// Parses `text`; nil when it is neither empty (the whole document) nor starts with `/`.
    public init?(_ text: String) {
        if text.isEmpty {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else { return nil }
        tokens = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(Self.unescaped)
    }

    public var description: String {
        var text = ""
        for token in tokens {
            text += "/"
            text += Self.escape(token)
        }
        return text
    }

    /// Escapes `~` and `/` in one reference token.
    public static func escape(_ token: String) -> String {
        // (Bytes, not Characters: a page names thousands of fields, and this is on that path.)
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        return token.map { $0 == "~" ? "~0" : $0 == "/" ? "~1" : String($0) }.joined()
    }

    /// `~1` is `/` and `~0` is `~` (in that order, so `~01` is `~1`).
    static func unescaped(_ token: Substring) -> String {
        guard token.utf8.contains(UInt8(ascii: "~")) else { return String(token) }
        var result = ""
        var index = token.startIndex
        while index < token.endIndex {
            let next = token.index(after: index)
            if token[index] == "~", next < token.endIndex, token[next] == "1" || token[next] == "0" {
                result.append(token[next] == "1" ? "/" : "~")
                index = token.index(after: next)
            } else {
                result.append(token[index])
                index = next
            }
        }
        return result
    }

    /// The pointer one level further down.
    public func appending(_ token: String) -> JSONPointer { JSONPointer(tokens: tokens + [token]) }
    public func appending(_ index: Int) -> JSONPointer { appending(String(index)) }
    /// `other`, read from where `self` points.
    public func appending(_ other: JSONPointer) -> JSONPointer { JSONPointer(tokens: tokens + other.tokens) }

    /// Whether `self` is `other` or lies inside it.
    public func isWithin(_ other: JSONPointer) -> Bool {
        tokens.count >= other.tokens.count && Array(tokens.prefix(other.tokens.count)) == other.tokens
    }
}

extension JSONValue {
    /// Why a value could not be put at a pointer.
    public struct PointerError: Error, Equatable, Sendable, CustomStringConvertible {
        public var pointer: String
        public var reason: String
        public var description: String { "\(pointer): \(reason)" }
    }

    /// The value at `pointer`, or nil when there is none.
    public subscript(pointer pointer: JSONPointer) -> JSONValue? {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let members):
                guard let next = members[token] else { return nil }
                current = next
            case .array(let items):
                guard let index = Int(token), items.indices.contains(index) else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }

    /// Puts `value` at `pointer`, making the objects on the way that are missing; nil removes the
    /// member (or array element), and makes nothing where there is nothing to remove. An array
    /// index may be at most the array's length (which appends).
    public mutating func set(_ value: JSONValue?, at pointer: JSONPointer) throws(PointerError) {
        if value == nil, self[pointer: pointer] == nil { return }
        try set(value, at: pointer.tokens[...], whole: pointer)
    }

    private mutating func set(_ value: JSONValue?, at tokens: ArraySlice<String>, whole: JSONPointer) throws(PointerError) {
        guard let token = tokens.first else {
            self = value ?? .null
            return
        }
        let rest = tokens.dropFirst()
        switch self {
        case .object(var members):
            if rest.isEmpty, value == nil {
                members[token] = nil
            } else {
                var child = members[token] ?? .object([:])
                try child.set(value, at: rest, whole: whole)
                members[token] = child
            }
            self = .object(members)
        case .array(var items):
            guard let index = Int(token), index >= 0, index <= items.count else {
                throw PointerError(pointer: whole.description, reason: "\(token) is not an index of an array of \(items.count)")
            }
            if rest.isEmpty, value == nil {
                if index < items.count { items.remove(at: index) }
            } else if index == items.count {
                var child = JSONValue.object([:])
                try child.set(value, at: rest, whole: whole)
                items.append(child)
            } else {
                try items[index].set(value, at: rest, whole: whole)
            }
            self = .array(items)
        case .null:
            var replacement = JSONValue.object([:])
            try replacement.set(value, at: tokens, whole: whole)
            self = replacement
        default:
            throw PointerError(pointer: whole.description, reason: "\(token) is inside a value that is neither an object nor an array")
        }
    }
}
