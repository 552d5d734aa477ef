import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// `SupportMailbox` in PostgreSQL: the app's template and address read, the message queued in
/// the mail outbox and its audit event written, in one transaction.
package struct SupportMailStore: SupportMailbox {
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

    package func queue(_ message: SupportMessage, appId: String, orgId: String) async throws -> Bool {
        let (kind, action): (MailKind, String) =
            switch message.kind {
            case .feedback: (.feedback, "app.feedback_sent")
            case .contact: (.contact, "app.contact_sent")
            }
        return try await client.withTransaction(logger: logger) { connection in
            let choice = try await templates.choose(kind, appId: appId, orgId: orgId, on: connection)
            let address = message.kind == .feedback ? choice.app?.feedbackEmail : choice.app?.supportEmail
            guard let recipient = address else { return false }
            try await mail.enqueue(
                choice.template.render(
                    subjectText: message.subject, bodyText: message.body, from: choice.from, to: recipient, replyTo: message.replyTo),
                kind: kind, appId: appId, on: connection)
            try await audit.record(actor: "anonymous", action: action, details: ["appId": appId], on: connection)
            return true
        }
    }
}
