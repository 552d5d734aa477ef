/// Text that stands for an identity (a JSON member name, a step key, an id, a file name), equal,
/// hashed and ordered by its Unicode scalars. Swift's `String` compares by canonical
/// equivalence: `"\u{e9}"` and `"e\u{301}"` are one `String` key, one `Set` member, one
/// `Dictionary` entry, where RFC 8259 and every other system (PostgreSQL's jsonb, the apps'
/// parsers) see two names. Keyed by this, the two stay two (docs/security.md, Text compared by
/// Unicode scalars).
public struct ScalarKey: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let text: String

    public init(_ text: String) {
        self.text = text
    }

    public init(stringLiteral text: String) {
        self.text = text
    }

    public var description: String { text }

    /// UTF-8 bytes are equal exactly when the scalars are.
    public static func == (lhs: ScalarKey, rhs: ScalarKey) -> Bool {
        guard lhs.text.utf8.count == rhs.text.utf8.count else { return false }
        var (left, right) = (lhs.text, rhs.text)
        return left.withUTF8 { leftBytes in right.withUTF8 { leftBytes.elementsEqual($0) } }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(text.utf8.count)
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// By UTF-8 bytes, which is code point order.
    public static func < (lhs: ScalarKey, rhs: ScalarKey) -> Bool {
        lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
    }
}
