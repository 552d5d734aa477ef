import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// `feedback` and `contactUs`: a participant's message, e-mailed to the address the app's
/// definition names. The apps send these without a session, so the text is limited in size,
/// escaped into the HTML (the original pasted it in raw), and the calls are rate-limited per
/// client address by the route.
package struct SupportMessages: Sendable {
    package static let maxSubject = 200
    package static let maxBody = 10_000
    package static let maxName = 100

    package let client: PostgresClient
    package let templates: MailTemplates
    package let mail: MailOutbox
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, templates: MailTemplates, mail: MailOutbox, audit: AuditLog, logger: Logger) {
        self.client = client
        self.templates = templates
        self.mail = mail
        self.audit = audit
        self.logger = logger
    }

    /// `subject` and `body` as sent: the limits count what was sent, then the text is trimmed.
    package func sendFeedback(subject sentSubject: String, body sentBody: String, appId: String, orgId: String) async throws {
        let (subject, body) = try Self.checked(subject: sentSubject, body: sentBody)
        try await client.withTransaction(logger: logger) { connection in
            let choice = try await templates.choose(.feedback, appId: appId, orgId: orgId, on: connection)
            guard let recipient = choice.app?.feedbackEmail else {
                throw RegistrationError.invalid("Feedback is not set up for this app.")
            }
            try await mail.enqueue(
                choice.template.render(subjectText: subject, bodyText: body, from: choice.from, to: recipient),
                kind: .feedback, appId: appId, on: connection)
            try await audit.record(actor: "anonymous", action: "app.feedback_sent", details: ["appId": appId], on: connection)
        }
    }

    /// The reply goes to the participant: their address is the message's `Reply-To`.
    package func sendContact(
        subject sentSubject: String, body sentBody: String, email: String, firstName sentFirstName: String?,
        appId: String, orgId: String
    ) async throws {
        let (subject, body) = try Self.checked(subject: sentSubject, body: sentBody)
        guard EmailAddress.isPlausible(email), !email.contains(where: { "<>\",;".contains($0) }) else {
            throw RegistrationError.invalid("Please enter a valid email address.")
        }
        var firstName: String?
        if let sentFirstName, !sentFirstName.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            guard let name = TextRules.singleLineField(sentFirstName, maximum: Self.maxName) else {
                throw RegistrationError.invalid("The first name must be one line of up to \(Self.maxName) characters.")
            }
            firstName = name
        }
        let text = "From: \(firstName.map { "\($0) " } ?? "")<\(email)>\n\n\(body)"
        try await client.withTransaction(logger: logger) { connection in
            let choice = try await templates.choose(.contact, appId: appId, orgId: orgId, on: connection)
            guard let recipient = choice.app?.supportEmail else {
                throw RegistrationError.invalid("Contact is not set up for this app.")
            }
            try await mail.enqueue(
                choice.template.render(subjectText: subject, bodyText: text, from: choice.from, to: recipient, replyTo: email),
                kind: .contact, appId: appId, on: connection)
            try await audit.record(actor: "anonymous", action: "app.contact_sent", details: ["appId": appId], on: connection)
        }
    }

    /// The subject and body trimmed, once their lengths as sent are within the limits. Counted in
    /// Unicode scalars, as the OpenAPI document's `maxLength` counts: a letter with combining marks
    /// is one `Character` but several scalars.
    package static func checked(subject: String, body: String) throws -> (subject: String, body: String) {
        guard subject.unicodeScalars.count <= maxSubject else {
            throw RegistrationError.invalid("The subject must be at most \(maxSubject) characters.")
        }
        guard body.unicodeScalars.count <= maxBody else {
            throw RegistrationError.invalid("The message must be at most \(maxBody) characters.")
        }
        return (subject.trimmingCharacters(in: .whitespacesAndNewlines), body.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
