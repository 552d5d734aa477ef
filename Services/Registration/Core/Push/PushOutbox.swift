import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The per-device rows `PushAudienceStore` and the run reminders queue, as the push worker claims
/// and settles them.
package struct PushOutbox: Sendable {
    /// The `push_outbox` table, of the shared queue shape (`QueueTable`, which also gives its depth for `/metrics`).
    package static let table = QueueTable("push_outbox", sentColumn: "sent_at")

    package struct Queued: Sendable {
        package var id: Int64
        package var sessionId: UUID
        package var deviceOS: String
        package var deviceToken: String
        package var language: String
        package var attempts: Int
        package var notification: NotificationMessage
    }

    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// Claims due rows (`SKIP LOCKED`, leased for `lease`) with their notification.
    package func claim(batch: Int, lease: Duration) async throws -> [Queued] {
        // The message is the notification's from study-metadata, a run's reminder's, or a
        // consent reminder's.
        let rows = try await client.query(
            Self.table.claim(
                returning: """
                    q.session_id, q.device_os, q.device_token, q.language,
                    coalesce((SELECT n.message FROM received_notifications n WHERE n.id = q.notification_id),
                             (SELECT r.message FROM run_reminders r WHERE r.id = q.reminder_id),
                             (SELECT c.message FROM consent_reminders c WHERE c.id = q.consent_reminder_id))::text
                    """,
                limit: batch, lease: lease),
            logger: logger)
        var claimed: [Queued] = []
        for try await (id, attempts, session, os, token, language, message) in rows.decode(
            (Int64, Int, UUID, String, String, String, String).self)
        {
            claimed.append(Queued(
                id: id, sessionId: session, deviceOS: os, deviceToken: token, language: language, attempts: attempts,
                notification: try JSONDecoder().decode(NotificationMessage.self, from: Data(message.utf8))))
        }
        return claimed.sorted { $0.id < $1.id }
    }

    package func markSent(id: Int64, providerId: String) async throws {
        try await client.query(Self.table.complete(id: id, recording: ("provider_id", providerId)), logger: logger)
    }

    package func markFailed(id: Int64, error: String, retryAfter: Duration?) async throws {
        try await client.query(Self.table.fail(id: id, reason: error, retryAfter: retryAfter), logger: logger)
    }

    /// The provider no longer knows `token`: it is taken off its session (so nothing else is sent
    /// to it) and every row still queued for it is given up.
    package func removeUnregistered(_ queued: Queued, reason: String) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                UPDATE participant_sessions SET device_token = NULL
                WHERE id = \(queued.sessionId) AND device_token = \(queued.deviceToken)
                """, logger: logger)
            try await connection.query(
                """
                UPDATE push_outbox SET last_error = \(reason), gave_up_at = now()
                WHERE device_token = \(queued.deviceToken) AND sent_at IS NULL AND gave_up_at IS NULL
                """, logger: logger)
            try await audit.record(
                actor: "push", action: "push.token_removed",
                details: ["session": queued.sessionId.uuidString.lowercased(), "os": queued.deviceOS, "reason": reason],
                on: connection)
        }
    }
}
