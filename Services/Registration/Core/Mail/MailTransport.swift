import Foundation
import Logging

/// Where e-mail goes: an SMTP server, or files for local use.
package protocol MailTransport: Sendable {
    /// Delivers one message; returns where it went (a file path, a server's queue id).
    func deliver(_ message: MailMessage, messageId: String) async throws -> String
}

/// Writes each message as an `.eml` file (mode 0600) under a directory: `make run`'s default, so a
/// person trying the platform can open the verification code. Not for production.
package struct FileMailTransport: MailTransport {
    package let directory: URL
    package let logger: Logger

    package init(directory: URL, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    package func deliver(_ message: MailMessage, messageId: String) async throws -> String {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Microseconds since 1970, so the files sort in the order they were written.
        let stamp = String(Int64(Date().timeIntervalSince1970 * 1_000_000))
        let file = directory.appendingPathComponent("\(stamp)-\(messageId.prefix(12)).eml")
        // Written beside it and renamed, so a reader never sees half a message.
        let partial = directory.appendingPathComponent(".\(stamp)-\(messageId.prefix(12)).partial")
        guard FileManager.default.createFile(
            atPath: partial.path, contents: Data(message.rfc5322(messageId: messageId).utf8),
            attributes: [.posixPermissions: 0o600])
        else { throw MailDeliveryError(reason: "could not write \(partial.path)", permanent: false) }
        do {
            try FileManager.default.moveItem(at: partial, to: file)
        } catch {
            throw MailDeliveryError(reason: "could not write \(file.path): \(error)", permanent: false)
        }
        logger.info("mail written", metadata: ["path": "\(file.path)"])
        return file.path
    }
}

package struct MailDeliveryError: Error, CustomStringConvertible {
    package var reason: String
    /// The server refused the message for good (5xx): retrying will not help.
    package var permanent: Bool
    package var description: String { reason }
}
