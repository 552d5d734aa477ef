extension String {
    /// The text with each Unicode scalar that `replacements` names written as its replacement.
    ///
    /// Foundation's `replacingOccurrences(of:with:)` and Swift's `Character` comparisons match
    /// grapheme clusters: a quote followed by a combining mark (U+0301) is one `Character` that is
    /// not `"`, and CR LF is one that is neither CR nor LF. Text from outside that is escaped for
    /// SQL, CSV, a mail header or HTML must be escaped scalar by scalar, or such a pair slips
    /// through unescaped (docs/security.md, Text compared by Unicode scalars).
    public func replacingScalars(_ replacements: [Unicode.Scalar: String]) -> String {
        guard unicodeScalars.contains(where: { replacements[$0] != nil }) else { return self }
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if let replacement = replacements[scalar] {
                out.append(contentsOf: replacement.unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether the text holds any of `scalars`, scalar by scalar (not by `Character`).
    public func containsScalar(in scalars: Set<Unicode.Scalar>) -> Bool {
        unicodeScalars.contains { scalars.contains($0) }
    }
}

/// Rules for text from outside, by Unicode scalar.
public enum TextRules {
    /// One line: no control character (C0, DEL, C1: CR and LF among them) and no Unicode line or
    /// paragraph separator. Checked by scalar: CR LF is one `Character` that is neither CR nor LF.
    public static func isSingleLine(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{2028}" || $0 == "\u{2029}" }
    }

    /// A one-line field as it is kept: `raw` trimmed of surrounding white space, or nil when the
    /// trimmed text is empty, runs onto a second line, or `raw` itself has more than `maximum`
    /// Unicode scalars. The limit applies to what was sent, as the OpenAPI documents' `maxLength`
    /// counts it (code points, as PostgreSQL's length() does too): a name padded past the limit
    /// with white space is refused, not quietly trimmed back under it.
    public static func singleLineField(_ raw: String, maximum: Int) -> String? {
        guard raw.unicodeScalars.count <= maximum else { return nil }
        let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, isSingleLine(trimmed) else { return nil }
        return trimmed
    }
}
