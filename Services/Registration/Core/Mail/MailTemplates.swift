import Foundation
import PostgresNIO
import StudyModels

/// The e-mails the registration service sends. An app may give its own subject and body for each
/// kind (`AppMail` in its definition); `<<< TOKEN HERE >>>` in them is replaced by the code or
/// password. Without one, these built-in texts are used. Everything inserted into HTML is escaped.
package enum MailKind: String, Codable, Sendable {
    case verification
    case passwordHelp = "password_help"
    case feedback
    case contact
    /// An invitation to a study, with its enrollment token (written by `Invitations`, not a template).
    case invitation
}

package struct MailTemplate: Codable, Sendable, Equatable {
    package var subject: String
    /// HTML; `<<< TOKEN HERE >>>` marks where the code or password goes.
    package var body: String

    package static let tokenMarker = AppMail.tokenMarker

    package static func builtIn(_ kind: MailKind) -> MailTemplate {
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
        case .invitation:
            // The subject, with the study's name at the marker; `Invitations` writes the body
            // around the token (the study, the app, the QR code, the expiry).
            MailTemplate(subject: "Your invitation to \(tokenMarker)", body: "<p>\(tokenMarker)</p>")
        }
    }

    /// The message with `token` in place of the marker, escaped for HTML; the text part is the
    /// HTML with its tags removed.
    package func render(token: String, from: String, to: String) -> MailMessage {
        render(subjectText: token, bodyText: token, from: from, to: to)
    }

    /// The message with `subjectText` in the subject's marker and `bodyText` (escaped, its line
    /// breaks kept) in the body's.
    package func render(subjectText: String, bodyText: String, from: String, to: String, replyTo: String? = nil) -> MailMessage {
        let html = body.replacingOccurrences(
            of: Self.tokenMarker, with: HTML.escape(bodyText).replacingOccurrences(of: "\n", with: "<br>"))
        let subject = self.subject.replacingOccurrences(of: Self.tokenMarker, with: subjectText)
            .replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        return MailMessage(from: from, to: to, subject: subject, text: HTML.text(of: html), html: html, replyTo: replyTo)
    }
}

/// The texts and sender for an app's messages: the app's own (from its definition, as
/// study-metadata sent it) where it has them, the built-in ones otherwise.
package struct MailTemplates: Sendable {
    package struct Choice: Sendable {
        package var template: MailTemplate
        /// The `From:` mailbox.
        package var from: String
        /// The app, when study-metadata has sent it.
        package var app: AppDefinition?
    }

    package let appSettings: AppSettingsStore
    /// The service's `mail.from` setting.
    package let defaultFrom: String

    package init(appSettings: AppSettingsStore, defaultFrom: String) {
        self.appSettings = appSettings
        self.defaultFrom = defaultFrom
    }

    package func choose(_ kind: MailKind, appId: String, orgId: String, on connection: PostgresConnection? = nil) async throws -> Choice {
        Self.choice(kind, app: try await appSettings.app(appId: appId, orgId: orgId, on: connection), defaultFrom: defaultFrom)
    }

    /// The app's own template and sender for `kind` where it has them, the built-in ones where not.
    package static func choice(_ kind: MailKind, app: AppDefinition?, defaultFrom: String) -> Choice {
        let mail = app?.mail
        let custom: AppMail.Template? =
            switch kind {
            case .verification: mail?.verification
            case .passwordHelp: mail?.passwordHelp
            case .feedback: mail?.feedback
            case .contact: mail?.contact
            case .invitation: nil
            }
        return Choice(
            template: custom.map { MailTemplate(subject: $0.subject, body: $0.body) } ?? .builtIn(kind),
            from: mail.flatMap(Self.mailbox) ?? defaultFrom, app: app)
    }

    /// `"Name" <address>`, the name encoded when it is not ASCII.
    package static func mailbox(_ mail: AppMail) -> String? {
        guard let address = mail.fromAddress else { return nil }
        guard let name = mail.fromName else { return address }
        let shown = name.allSatisfy(\.isASCII) ? "\"\(name)\"" : MailMessage.encodedHeader(name)
        return "\(shown) <\(address)>"
    }
}

package enum HTML {
    package static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// A readable plain-text version of simple HTML.
    package static func text(of html: String) -> String {
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
