import Foundation
import Synchronization

/// A budget for the `JSONValue`s one `Decoder` builds (docs/security.md, Budgets). Foundation's
/// `JSONDecoder` reads the text compactly, but each `JSONValue` it is asked for (the open-ended
/// fields of a study document, an upload's metadata) becomes a tree whose objects are hash
/// tables: a few megabytes of `{"a":` make gigabytes. Set on a decoder's `userInfo` (`budgeted`),
/// it is spent by every value any `JSONValue` of that decoding builds, together, and the decode
/// fails with `dataCorrupted` at the first value past it.
public final class JSONValueDecodingBudget: Sendable {
    public static let key = CodingUserInfoKey(rawValue: "studystack.jsonValueBudget")!

    public let maxNodes: Int
    private let spent = Mutex(0)

    public init(maxNodes: Int) {
        self.maxNodes = maxNodes
    }

    /// Counts one value; throws once more than `maxNodes` were built.
    func spend(_ codingPath: [any CodingKey]) throws {
        spent.withLock { $0 += 1 }
        try checkNotExhausted(codingPath)
    }

    /// Throws when the budget ran out: a decode that tried one reading and then another (an
    /// array, then an object) says the budget's reason, not the second reading's.
    func checkNotExhausted(_ codingPath: [any CodingKey]) throws {
        guard spent.withLock({ $0 > maxNodes }) else { return }
        throw DecodingError.dataCorrupted(.init(
            codingPath: codingPath, debugDescription: "more values than one document may hold (\(maxNodes))"))
    }
}

extension JSONDecoder {
    /// A decoder whose `JSONValue`s together build at most `maxNodes` values: for documents from
    /// outside that carry open-ended JSON.
    public static func budgeted(maxNodes: Int) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[JSONValueDecodingBudget.key] = JSONValueDecodingBudget(maxNodes: maxNodes)
        return decoder
    }
}
