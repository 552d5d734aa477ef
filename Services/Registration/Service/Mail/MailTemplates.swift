import Foundation

/// The e-mails the registration service sends. An app may give its own subject and body for each
/// kind (issue 4's app settings); `<<< TOKEN HERE >>>` in them is replaced by the code or password.
/// Without one, these built-in texts are used. Everything inserted into HTML is escaped.
enum MailKind: String, Codable, Sendable {
    case verification
    case passwordHelp = "password_help"
    case feedback
    case contact
}

struct MailTemplate: Codable, Sendable, Equatable {
    var subject: String
    /// HTML; `<<< TOKEN HERE >>>` marks where the code or password goes.
    var body: String

    static let tokenMarker = "<<< TOKEN HERE >>>"

    static func builtIn(_ kind: MailKind) -> MailTemplate {
        switch kind {
        case .verification:
            MailTemplate(
                subject: "Verify your e-mail address",
                body: """
                    <p>Thank you for signing up.</p>
                    <p>Your verification code is <strong>\(tokenMarker)</strong>. Enter it in the app within 48 hours.</p>
                    <p>If you did not sign up, ignore this message.</p>
                    """)
        case .passwordHelp:
            MailTemplate(
                subject: "Your temporary password",
                body: """
                    <p>We received a request to reset your password.</p>
                    <p>Your temporary password is <strong>\(tokenMarker)</strong>. Sign in with it within 48 hours;
                    the app will then ask you to choose a new password.</p>
                    <p>If you did not ask for this, ignore this message: your password has not changed.</p>
                    """)
        case .feedback:
            MailTemplate(subject: "Feedback: \(tokenMarker)", body: "\(tokenMarker)")
        case .contact:
            MailTemplate(subject: "Contact: \(tokenMarker)", body: "\(tokenMarker)")
        }
    }

    /// The message with `token` in place of the marker, escaped for HTML; the text part is the
    /// HTML with its tags removed.
    func render(token: String, from: String, to: String) -> MailMessage {
        let html = body.replacingOccurrences(of: Self.tokenMarker, with: HTML.escape(token))
        let subject = self.subject.replacingOccurrences(of: Self.tokenMarker, with: token)
            .replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        return MailMessage(from: from, to: to, subject: subject, text: HTML.text(of: html), html: html)
    }
}

enum HTML {
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A readable plain-text version of simple HTML.
    static func text(of html: String) -> String {
        var text = html.replacingOccurrences(of: "</p>", with: "\n").replacingOccurrences(of: "<br>", with: "\n")
        while let open = text.firstIndex(of: "<"), let close = text[open...].firstIndex(of: ">") {
            text.removeSubrange(open...close)
        }
        return text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .joined(separator: "\n") + "\n"
    }
}
