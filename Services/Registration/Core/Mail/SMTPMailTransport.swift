import Foundation
import SMTPClient

/// Delivers through an SMTP server (STARTTLS or TLS, AUTH PLAIN/LOGIN) with the SMTPClient module.
package struct SMTPMailTransport: MailTransport {
    package let client: SMTPClient

    package init(client: SMTPClient) {
        self.client = client
    }

    package func deliver(_ message: MailMessage, messageId: String) async throws -> String {
        do {
            let reply = try await client.send(
                from: message.from, to: [message.to], message: message.rfc5322(messageId: messageId))
            return "smtp://\(client.configuration.host):\(client.configuration.port) \(reply)"
        } catch let failure as SMTPClient.Failure {
            throw MailDeliveryError(reason: failure.description, permanent: failure.permanent)
        }
    }
}
