import Foundation
import StudyModels

/// One e-mail: plain text and HTML alternatives, and images the HTML shows (an invitation's QR code).
package struct MailMessage: Codable, Sendable, Equatable {
    /// A file sent inline with the message, which the HTML part shows as `cid:<contentId>`.
    package struct Attachment: Codable, Sendable, Equatable {
        package var filename: String
        package var contentType: String
        package var contentId: String
        package var data: Data

        package init(filename: String, contentType: String, contentId: String, data: Data) {
            self.filename = filename
            self.contentType = contentType
            self.contentId = contentId
            self.data = data
        }

        /// The content id of an invitation's QR code.
        package static let qrCodeId = "enrollment-token@studystack"
    }

    package var from: String
    package var to: String
    package var subject: String
    package var text: String
    package var html: String
    /// Where replies go (a contact message's sender), checked like `to`.
    package var replyTo: String?
    /// Absent in messages queued before attachments existed.
    package var attachments: [Attachment]?

    package init(
        from: String, to: String, subject: String, text: String, html: String, replyTo: String? = nil,
        attachments: [Attachment]? = nil
    ) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.replyTo = replyTo
        self.attachments = attachments
    }

    /// RFC 5322 with a MIME multipart/alternative body, CRLF line ends, UTF-8 parts in base64
    /// (so no line is too long and no header injection survives: `to` and `subject` are checked
    /// to be one line when the message is built).
    package func rfc5322(messageId: String, date: Date = Date()) -> String {
        let boundary = "studystack-\(messageId.prefix(16))"
        func base64Lines(_ data: Data) -> String {
            let encoded = data.base64EncodedString()
            return stride(from: 0, to: encoded.count, by: 76).map { start in
                let from = encoded.index(encoded.startIndex, offsetBy: start)
                let to = encoded.index(from, offsetBy: min(76, encoded.count - start))
                return String(encoded[from..<to])
            }.joined(separator: "\r\n")
        }
        let alternative = [
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(Data(text.utf8)),
            "--\(boundary)",
            "Content-Type: text/html; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
            base64Lines(Data(html.utf8)),
            "--\(boundary)--",
        ]
        var body: [String]
        if let attachments, !attachments.isEmpty {
            // multipart/related: the alternatives, then the images the HTML part shows.
            let related = "\(boundary)-related"
            body = [
                "Content-Type: multipart/related; type=\"multipart/alternative\"; boundary=\"\(related)\"",
                "",
                "--\(related)",
                "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
                "",
            ] + alternative
            for attachment in attachments {
                body += [
                    "--\(related)",
                    "Content-Type: \(Self.headerToken(attachment.contentType))",
                    "Content-Transfer-Encoding: base64",
                    "Content-ID: <\(Self.headerToken(attachment.contentId))>",
                    "Content-Disposition: inline; filename=\"\(Self.headerToken(attachment.filename))\"",
                    "",
                    base64Lines(attachment.data),
                ]
            }
            body.append("--\(related)--")
        } else {
            body = ["Content-Type: multipart/alternative; boundary=\"\(boundary)\"", ""] + alternative
        }
        let lines = [
            "From: \(Self.oneLine(from))",
            "To: \(Self.oneLine(to))",
        ] + (replyTo.map { ["Reply-To: \(Self.oneLine($0))"] } ?? []) + [
            "Subject: \(Self.encodedHeader(subject))",
            "Date: \(Self.rfc2822Date(date))",
            "Message-ID: <\(messageId)@studystack>",
            "MIME-Version: 1.0",
        ] + body + [""]
        return lines.joined(separator: "\r\n")
    }

    /// An address header's value with any control scalar made a space: the addresses are checked
    /// to be one line where the message is built, and this keeps a message queued before that
    /// check from carrying a header of its own.
    static func oneLine(_ value: String) -> String {
        TextRules.isSingleLine(value) ? value
            : String(String.UnicodeScalarView(value.unicodeScalars.map { TextRules.isSingleLine(String($0)) ? $0 : " " }))
    }

    /// A header parameter the service writes itself, kept to safe characters.
    static func headerToken(_ value: String) -> String {
        String(value.unicodeScalars.filter { $0.isASCII && $0.value > 0x20 && !"\"<>\\;".unicodeScalars.contains($0) }
            .map(Character.init))
    }

    /// Whether a header value is a single line (no CR, LF or other control character that could
    /// start another header), scalar by scalar: CR LF is one `Character` that is neither.
    package static func isSingleLine(_ value: String) -> Bool {
        TextRules.isSingleLine(value)
    }

    /// The value as it is when every scalar is printable ASCII; else RFC 2047 encoded-words
    /// (UTF-8, base64) of at most 75 characters each, folded onto lines of their own. Whatever the
    /// value holds (CR LF, a study name's line break) ends up inside base64, never in the header.
    package static func encodedHeader(_ value: String) -> String {
        if value.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) }) { return value }
        // 45 bytes are 60 base64 characters: with `=?utf-8?B?` and `?=`, 72 per word.
        var words: [String] = []
        var chunk: [UInt8] = []
        for scalar in value.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if chunk.count + bytes.count > 45 {
                words.append(Data(chunk).base64EncodedString())
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append(Data(chunk).base64EncodedString()) }
        return words.map { "=?utf-8?B?\($0)?=" }.joined(separator: "\r\n ")
    }

    package static func rfc2822Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
