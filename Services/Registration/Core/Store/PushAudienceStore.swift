import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Turns a notification from study-metadata into one push per device, as the original did, with
/// parameterised queries: an app-wide notification goes to every signed-in device of the app's
/// participants that have remote notifications on; a study notification to those of the study's
/// participants who have joined it (not yet-to-join, withdrawn or not eligible).
package struct PushAudienceStore: Sendable {
    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// Records each notification once (a repeated delivery is recognised by its id) with its
    /// devices; returns how many devices were queued in all.
    package func receive(_ batch: NotificationBatch) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            var queued = 0
            for notification in batch.notifications {
                let message = String(decoding: try JSONEncoder().encode(notification), as: UTF8.self)
                let inserted = try await connection.query(
                    """
                    INSERT INTO received_notifications (id, app_id, org_id, study_id, notification_id, message, devices)
                    VALUES (\(notification.id), \(notification.appId), \(notification.orgId), \(notification.studyId),
                            \(notification.notificationId), \(message)::jsonb, 0)
                    ON CONFLICT (id) DO NOTHING
                    RETURNING id
                    """, logger: logger)
                var isNew = false
                for try await _ in inserted { isNew = true }
                guard isNew else { continue }
                let rows = try await connection.query(
                    """
                    INSERT INTO push_outbox (notification_id, session_id, device_os, device_token, language)
                    SELECT \(notification.id), s.id, s.device_os, s.device_token,
                           coalesce(nullif(p.settings ->> 'locale', ''), 'en')
                    FROM participant_sessions s
                    JOIN participants p ON p.user_id = s.user_id
                    WHERE p.app_id = \(notification.appId) AND p.org_id = \(notification.orgId)
                      AND s.revoked_at IS NULL AND s.refresh_expires_at > now()
                      AND s.device_token IS NOT NULL AND s.device_os IN ('ios', 'android')
                      AND coalesce((p.settings ->> 'remoteNotifications')::boolean, false)
                      AND (\(notification.studyId)::text IS NULL OR EXISTS (
                          SELECT 1 FROM participant_studies ps
                          WHERE ps.user_id = p.user_id AND ps.study_id = \(notification.studyId)::text
                            AND ps.status NOT IN ('yetToJoin', 'Withdrawn', 'notEligible')))
                    RETURNING id
                    """, logger: logger)
                var devices = 0
                for try await _ in rows { devices += 1 }
                try await connection.query(
                    "UPDATE received_notifications SET devices = \(devices) WHERE id = \(notification.id)", logger: logger)
                try await audit.record(
                    actor: "study-metadata", action: "notification.received", studyId: notification.studyId,
                    details: ["notificationId": notification.notificationId, "devices": String(devices)], on: connection)
                queued += devices
            }
            if queued > 0 { try await ChangeListener.notify(PushWorker.channel, on: connection, logger: logger) }
            return queued
        }
    }
}
