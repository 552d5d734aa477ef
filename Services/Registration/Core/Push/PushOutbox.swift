import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The per-device rows `PushAudienceStore` queues, as the push worker claims and settles them.
package struct PushOutbox: Sendable {
    /// Pushes waiting, and the age of the oldest, for `/metrics` (`ServiceMetrics.watchQueue`).
    package static let depthQuery: PostgresQuery = """
        SELECT count(*)::int, extract(epoch FROM now() - min(created_at))::float8
        FROM push_outbox WHERE sent_at IS NULL AND gave_up_at IS NULL
        """

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
        let rows = try await client.query(
            """
            WITH claimed AS (
                UPDATE push_outbox o SET attempts = o.attempts + 1,
                    next_attempt_at = now() + make_interval(secs => \(lease.inSeconds))
                FROM (
                    SELECT id FROM push_outbox
                    WHERE sent_at IS NULL AND gave_up_at IS NULL AND next_attempt_at <= now()
                    ORDER BY id LIMIT \(batch) FOR UPDATE SKIP LOCKED
                ) due
                WHERE o.id = due.id
                RETURNING o.id, o.session_id, o.device_os, o.device_token, o.language, o.attempts, o.notification_id
            )
            SELECT c.id, c.session_id, c.device_os, c.device_token, c.language, c.attempts, n.message::text
            FROM claimed c JOIN received_notifications n ON n.id = c.notification_id
            ORDER BY c.id
            """, logger: logger)
        var claimed: [Queued] = []
        for try await (id, session, os, token, language, attempts, message) in rows.decode(
            (Int64, UUID, String, String, String, Int, String).self)
        {
            claimed.append(Queued(
                id: id, sessionId: session, deviceOS: os, deviceToken: token, language: language, attempts: attempts,
                notification: try JSONDecoder().decode(NotificationMessage.self, from: Data(message.utf8))))
        }
        return claimed
    }

    package func markSent(id: Int64, providerId: String) async throws {
        try await client.query(
            "UPDATE push_outbox SET sent_at = now(), last_error = NULL, provider_id = \(providerId) WHERE id = \(id)",
            logger: logger)
    }

    package func markFailed(id: Int64, error: String, retryAfter: Duration?) async throws {
        if let retryAfter {
            try await client.query(
                """
                UPDATE push_outbox SET last_error = \(error),
                    next_attempt_at = now() + make_interval(secs => \(retryAfter.inSeconds))
                WHERE id = \(id)
                """, logger: logger)
        } else {
            try await client.query(
                "UPDATE push_outbox SET last_error = \(error), gave_up_at = now() WHERE id = \(id)", logger: logger)
        }
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
