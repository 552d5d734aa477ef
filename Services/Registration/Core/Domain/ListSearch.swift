import Foundation

/// What the search of an admin list (`q`: participants, invitations, an app's accounts) matches,
/// in the forms an index reads: the start of an id (a participant's, an invitation's), as the
/// range of ids that start so (an id's text is lowercase hex with dashes, and PostgreSQL orders
/// uuids byte by byte, which is the order of that text), and a part of an e-mail address, as a
/// `LIKE` pattern (the accounts' trigram index answers it; `position()` could only be answered by
/// reading every address).
package struct ListSearch: Sendable, Equatable {
    /// The lowest and highest id starting with the text; nil when no id can.
    package var firstId: UUID?
    package var lastId: UUID?
    /// `%text%`, with `LIKE`'s own characters (`%`, `_`, `\`) matching themselves.
    package var emailPattern: String

    /// Nil for no search. The text is lowercased, as participant ids and e-mail keys are.
    package init?(_ text: String?) {
        guard let text = text?.lowercased(), !text.isEmpty else { return nil }
        (firstId, lastId) = Self.ids(startingWith: text)
        var pattern = "%"
        for scalar in text.unicodeScalars {
            if scalar == "%" || scalar == "_" || scalar == "\\" { pattern.unicodeScalars.append("\\") }
            pattern.unicodeScalars.append(scalar)
        }
        pattern.unicodeScalars.append("%")
        emailPattern = pattern
    }

    static let lowest = Array("00000000-0000-0000-0000-000000000000".unicodeScalars)
    static let highest = Array("ffffffff-ffff-ffff-ffff-ffffffffffff".unicodeScalars)

    /// The ids whose text starts with `prefix`, as their first and last; (nil, nil) when it is
    /// longer than an id or not the start of one (a dash out of place, a letter past f).
    static func ids(startingWith prefix: String) -> (UUID?, UUID?) {
        let typed = Array(prefix.unicodeScalars)
        guard typed.count <= lowest.count else { return (nil, nil) }
        for (index, scalar) in typed.enumerated() {
            let isHex = ("0"..."9").contains(scalar) || ("a"..."f").contains(scalar)
            guard lowest[index] == "-" ? scalar == "-" : isHex else { return (nil, nil) }
        }
        func id(_ rest: [Unicode.Scalar]) -> UUID? {
            var text = String.UnicodeScalarView()
            text.append(contentsOf: typed)
            text.append(contentsOf: rest[typed.count...])
            return UUID(uuidString: String(text))
        }
        return (id(lowest), id(highest))
    }
}
