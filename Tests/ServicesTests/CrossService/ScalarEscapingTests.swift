import Foundation
import RegistrationCore
import ResponseCore
import StudyModels
import Testing

/// Every place that escapes text from outside for another language (SQL, CSV, a mail header)
/// does it scalar by scalar: a quote followed by a combining mark, or CR LF, is one `Character`
/// that a `Character` comparison does not see (docs/security.md, Text compared by Unicode scalars).
@Suite struct ScalarEscapingTests {
    static let quoteAndMark = "'\u{301}"

    /// A participant's string literal ending in a quote and a combining mark stays one literal:
    /// the quote is doubled, so PostgreSQL never reads past it.
    @Test func aSQLLiteralDoublesAQuoteFollowedByACombiningMark() {
        let value = "x\(Self.quoteAndMark), (SELECT secret FROM other) --"
        let literal = QueryTranslator.literal(value)
        let quotes = literal.unicodeScalars.filter { $0 == "'" }.count
        #expect(quotes == 4, "opening, doubled, closing: \(literal)")
        #expect(literal.unicodeScalars.first == "'" && literal.unicodeScalars.last == "'")
        // Between the outer quotes, every quote is one of a doubled pair.
        let inner = String(String.UnicodeScalarView(literal.unicodeScalars.dropFirst().dropLast()))
        let stripped = inner.unicodeScalars.split(separator: "'", omittingEmptySubsequences: false)
        #expect(stripped.count == 3 && stripped[1].isEmpty, "the quote inside is doubled: \(literal)")
    }

    @Test func aQuotedNameDoublesItsQuotesAndCannotHoldNUL() {
        let name = SQLName.quoted("a\"\u{301}b\u{0}c")
        #expect(name.unicodeScalars.filter { $0 == "\"" }.count == 4, "\(name)")
        #expect(!name.unicodeScalars.contains("\u{0}"), "NUL would end the statement's text: \(name)")
    }

    /// `=` followed by a zero-width joiner is one `Character` that is not `=`: the formula guard
    /// reads the first scalar.
    @Test func theCSVFormulaGuardReadsTheFirstScalar() {
        let formula = StudyExport.csvValue(#""=\u200dHYPERLINK(\"https://evil.example\")""#, text: true)
        let start = Array(formula.unicodeScalars.prefix(3))
        #expect(start == ["\"", "'", "="], "the formula is neutralised with a leading quote: \(formula)")
        let field = StudyExport.csvField("a\"\u{301},b")
        #expect(field.unicodeScalars.filter { $0 == "\"" }.count == 4, "quoted, inner quote doubled: \(field)")
    }

    /// A study name with CR LF in an invitation's subject: the header block keeps its own lines
    /// only, and the name travels RFC 2047-encoded.
    @Test func aNameWithALineBreakCannotAddAHeaderToAMessage() {
        let subject = "Your invitation to Sleep\r\nBcc: everyone@example.org\r\n\r\nFake body"
        let message = MailMessage(
            from: "StudyStack <no-reply@example.org>", to: "p@example.org", subject: subject, text: "real", html: "<p>real</p>")
        let wire = message.rfc5322(messageId: "0123456789abcdef")
        let header = wire.components(separatedBy: "\r\n\r\n")[0]
        let lines = header.components(separatedBy: "\r\n")
        #expect(!lines.contains { $0.hasPrefix("Bcc:") }, "\(header)")
        #expect(lines.filter { !$0.hasPrefix(" ") }.map { $0.split(separator: ":")[0] }.sorted()
            == ["Content-Type", "Date", "From", "MIME-Version", "Message-ID", "Subject", "To"], "\(header)")
        // Every encoded word is at most 75 characters (RFC 2047), and they decode to the name.
        let words = lines.filter { $0.hasPrefix("Subject:") || $0.hasPrefix(" ") }
            .map { $0.replacingOccurrences(of: "Subject: ", with: "").trimmingCharacters(in: .whitespaces) }
        #expect(!words.isEmpty && words.allSatisfy { $0.count <= 75 && $0.hasPrefix("=?utf-8?B?") }, "\(words)")
        let decoded = words.compactMap { Data(base64Encoded: String($0.dropFirst(10).dropLast(2))) }.reduce(Data(), +)
        #expect(String(decoding: decoded, as: UTF8.self) == subject)
        #expect(MailMessage.encodedHeader("Plain subject") == "Plain subject")
        #expect(!MailMessage.isSingleLine("a\r\nb") && MailMessage.isSingleLine("a b"))
    }
}
