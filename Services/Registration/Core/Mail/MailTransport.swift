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
        // Named by the message's id, which starts with its queue time (so the files sort in the
        // order the messages were queued): a second delivery of the same message replaces the
        // first instead of leaving two.
        let file = directory.appendingPathComponent("\(messageId).eml")
        // Written beside it and renamed, so a reader never sees half a message.
        let partial = directory.appendingPathComponent(".\(messageId)-\(UUID().uuidString).partial")
        guard FileManager.default.createFile(
            atPath: partial.path, contents: Data(message.rfc5322(messageId: messageId).utf8),
            attributes: [.posixPermissions: 0o600])
        else { throw MailDeliveryError(reason: "could not write \(partial.path)", permanent: false) }
        // rename(2) replaces an existing file atomically; FileManager.moveItem would refuse it.
        guard rename(partial.path, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: partial)
            throw MailDeliveryError(reason: "could not write \(file.path): \(reason)", permanent: false)
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
