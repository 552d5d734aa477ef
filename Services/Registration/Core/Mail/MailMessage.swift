import Foundation

/// One e-mail: plain text and HTML alternatives.
package struct MailMessage: Codable, Sendable, Equatable {
    package var from: String
    package var to: String
    package var subject: String
    package var text: String
    package var html: String
    /// Where replies go (a contact message's sender), checked like `to`.
    package var replyTo: String?

    /// RFC 5322 with a MIME multipart/alternative body, CRLF line ends, UTF-8 parts in base64
    /// (so no line is too long and no header injection survives: `to` and `subject` are checked
    /// to be one line when the message is built).
    package func rfc5322(messageId: String, date: Date = Date()) -> String {
        let boundary = "studystack-\(messageId.prefix(16))"
        func base64Lines(_ text: String) -> String {
            let encoded = Data(text.utf8).base64EncodedString()
            return stride(from: 0, to: encoded.count, by: 76).map { start in
                let from = encoded.index(encoded.startIndex, offsetBy: start)
                let to = encoded.index(from, offsetBy: min(76, encoded.count - start))
                return String(encoded[from..<to])
            }.joined(separator: "\r\n")
        }
        let lines = [
            "From: \(from)",
            "To: \(to)",
        ] + (replyTo.map { ["Reply-To: \($0)"] } ?? []) + [
            "Subject: \(Self.encodedHeader(subject))",
            "Date: \(Self.rfc2822Date(date))",
            "Message-ID: <\(messageId)@studystack>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(text),
            "--\(boundary)",
            "Content-Type: text/html; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(html),
            "--\(boundary)--",
            "",
        ]
        return lines.joined(separator: "\r\n")
    }

    /// Whether a header value is a single line (no CR or LF that could start another header).
    package static func isSingleLine(_ value: String) -> Bool {
        !value.contains(where: { $0 == "\r" || $0 == "\n" })
    }

    /// RFC 2047 encoded-word when the value is not plain ASCII.
    package static func encodedHeader(_ value: String) -> String {
        value.allSatisfy({ $0.isASCII }) ? value : "=?utf-8?B?\(Data(value.utf8).base64EncodedString())?="
    }

    package static func rfc2822Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
