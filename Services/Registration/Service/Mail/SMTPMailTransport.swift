import Foundation
import SMTPClient

/// Delivers through an SMTP server (STARTTLS or TLS, AUTH PLAIN/LOGIN) with the SMTPClient module.
struct SMTPMailTransport: MailTransport {
    let client: SMTPClient

    func deliver(_ message: MailMessage, messageId: String) async throws -> String {
        do {
            let reply = try await client.send(
                from: message.from, to: [message.to], message: message.rfc5322(messageId: messageId))
            return "smtp://\(client.configuration.host):\(client.configuration.port) \(reply)"
        } catch let failure as SMTPClient.Failure {
            throw MailDeliveryError(reason: failure.description, permanent: failure.permanent)
        }
    }
}
