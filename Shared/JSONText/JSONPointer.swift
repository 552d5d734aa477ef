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
        // Split by scalar: a "/" followed by a combining mark is one Character, and still a separator.
        guard text.unicodeScalars.first == "/" else { return nil }
        tokens = text.unicodeScalars.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
            .map { Self.unescaped(String(String.UnicodeScalarView($0))) }
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
        var escaped = String.UnicodeScalarView()
        for scalar in token.unicodeScalars {
            switch scalar {
            case "~": escaped.append(contentsOf: "~0".unicodeScalars)
            case "/": escaped.append(contentsOf: "~1".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// `~1` is `/` and `~0` is `~` (in that order, so `~01` is `~1`), read by Unicode scalar.
    static func unescaped(_ token: String) -> String {
        guard token.utf8.contains(UInt8(ascii: "~")) else { return token }
        var result = String.UnicodeScalarView()
        var scalars = token.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let scalar = pending {
            pending = scalars.next()
            if scalar == "~", let next = pending, next == "0" || next == "1" {
                result.append(next == "1" ? "/" : "~")
                pending = scalars.next()
            } else {
                result.append(scalar)
            }
        }
        return String(result)
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
