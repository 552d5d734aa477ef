import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// E-mails waiting to be sent. A message is queued in the transaction of the change that needs
/// it (a registration, a password request), sealed with AES-256-GCM because it carries codes and
/// temporary passwords, and its sealed body is erased once it is sent.
package struct MailOutbox: Sendable {
    /// The `mail_outbox` table, of the shared queue shape (`QueueTable`, which also gives its depth for `/metrics`).
    package static let table = QueueTable("mail_outbox", sentColumn: "sent_at")

    package struct Queued: Sendable {
        package var id: Int64
        package var kind: String
        package var recipient: String
        package var message: MailMessage
        package var attempts: Int
        /// When it was queued, in microseconds since 1970.
        package var queuedAtMicroseconds: Int64

        /// The same for every attempt at this message, so a delivery repeated after a worker died
        /// between sending and recording it is recognisable as the same message (and, for the
        /// file transport, replaces the first). The queue time first: the ids sort as queued.
        package var messageId: String { "\(queuedAtMicroseconds).\(id)" }
    }

    package let client: PostgresClient
    package let sealKey: SymmetricKey
    package let logger: Logger

    package init(client: PostgresClient, encryptionKey: Data, logger: Logger) {
        self.client = client
        sealKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: encryptionKey), info: Data("studystack-registration-mail".utf8),
            outputByteCount: 32)
        self.logger = logger
    }

    package func enqueue(_ message: MailMessage, kind: MailKind, appId: String, on connection: PostgresConnection) async throws {
        let sealed = try AES.GCM.seal(try JSONEncoder().encode(message), using: sealKey).storedBytes
        try await connection.query(
            """
            INSERT INTO mail_outbox (app_id, kind, recipient, sealed_message)
            VALUES (\(appId), \(kind.rawValue), \(message.to), \(ByteBuffer(bytes: sealed)))
            """, logger: logger)
        try await ChangeListener.notify(MailWorker.channel, on: connection, logger: logger)
    }

    /// Claims due messages (`SKIP LOCKED`, leased for `lease`), opening their sealed bodies.
    package func claim(batch: Int, lease: Duration) async throws -> [Queued] {
        let rows = try await client.query(
            Self.table.claim(
                returning: "q.kind, q.recipient, q.sealed_message, (extract(epoch FROM q.created_at) * 1000000)::bigint",
                limit: batch, lease: lease),
            logger: logger)
        var claimed: [Queued] = []
        for try await (id, attempts, kind, recipient, sealed, queuedAt) in rows.decode(
            (Int64, Int, String, String, ByteBuffer, Int64).self)
        {
            let box = try AES.GCM.SealedBox(combined: Data(buffer: sealed))
            let message = try JSONDecoder().decode(MailMessage.self, from: try AES.GCM.open(box, using: sealKey))
            claimed.append(
                Queued(id: id, kind: kind, recipient: recipient, message: message, attempts: attempts, queuedAtMicroseconds: queuedAt))
        }
        return claimed.sorted { $0.id < $1.id }
    }

    /// Sent: the sealed body is no longer kept, only where it was delivered.
    package func markSent(id: Int64, deliveredTo: String) async throws {
        try await client.query(
            Self.table.complete(id: id, recording: ("delivered_to", deliveredTo), clearing: ["sealed_message"]), logger: logger)
    }

    /// Retried later, or given up (and then its sealed body is not kept either).
    package func markFailed(id: Int64, error: String, retryAfter: Duration?) async throws {
        try await client.query(
            Self.table.fail(id: id, reason: error, retryAfter: retryAfter, clearing: ["sealed_message"]), logger: logger)
    }
}
