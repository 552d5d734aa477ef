import Foundation
import HummingbirdCore
import ServiceKit

extension URI {
    /// The query string's parameters decoded as HTML forms and servlet containers decode them:
    /// `+` is a space, then percent escapes, in names as well as values.
    ///
    /// Hummingbird's `queryParameters` decodes percent escapes in values only, so
    /// `sql=SELECT+energy+FROM+daily` (what curl's `--data-urlencode`, browsers and most HTTP
    /// libraries send) would reach a handler with its `+` signs. The original servers (Tomcat under
    /// LabKey and Jersey) read it as spaces, and so do these services. The iOS app leaves a literal
    /// `+` in a value unescaped; the original servers read that as a space too.
    public var formParameters: FlatDictionary<Substring, Substring> {
        guard let query, !query.isEmpty else { return [:] }
        return FlatDictionary(Self.formPairs(query).map { (key: $0.name[...], value: $0.value[...]) })
    }

    /// `application/x-www-form-urlencoded` text (a query string, or a form's body) as its
    /// name-value pairs in order, a name repeated as often as it came.
    /// Split by bytes: `&` and `=` are ASCII, and splitting text as characters (a `&` followed by
    /// a combining mark is one character) costs more than the rest of a cached app-API request.
    public static func formPairs(_ text: some StringProtocol) -> [(name: String, value: String)] {
        let text = Substring(text)
        var pairs: [(name: String, value: String)] = []
        for pair in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                pairs.append((
                    formDecoded(Substring(text.utf8[pair.startIndex..<equals])),
                    formDecoded(Substring(text.utf8[text.utf8.index(after: equals)..<pair.endIndex]))
                ))
            } else {
                pairs.append((formDecoded(Substring(pair)), ""))
            }
        }
        return pairs
    }

    /// `+` as a space, then percent escapes; text with a malformed escape is kept as it came.
    static func formDecoded(_ text: Substring) -> String {
        // Most parameters (ids, versions) need no decoding; Foundation's string calls cost more
        // than the rest of a cached app-API request.
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) { return String(text) }
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
