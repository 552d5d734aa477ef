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

    /// A session `s` of participant `p` whose device takes notifications: signed in, with a push
    /// token of a platform that has one, notifications switched on. The same SQL functions keep
    /// `study_audience_devices` (RegistrationMigrations.audienceDevices).
    static let deliverable = """
        session_takes_pushes(s.revoked_at, s.device_token, s.device_os) AND s.refresh_expires_at > now()
        AND takes_notifications(p.settings)
        """
    /// A participant's state `ps` in a study they have joined (a study's notifications go to
    /// them): in progress or completed, not yet to join, withdrawn or not eligible.
    static let joined = "tally_counts_status(ps.status)"

    /// Who a study notification sent now reaches: the participants who have joined the study,
    /// and their devices that take notifications (the same conditions `receive` applies). Both are
    /// read from counts kept as rows change, not from every participant: the study's participants
    /// from its tallies; its devices from the totals of the hours their sign-ins run out, less the
    /// hours past not yet pruned, plus the changes of hours to come not yet folded into them
    /// (`study_audience_changes`, a few seconds' worth), less the devices of the hour now whose
    /// sign-in already ran out (what still grows with the study: those ending within one hour).
    package func audience(studyId: String) async throws -> StudyAudience {
        let rows = try await client.query(
            """
            SELECT (SELECT coalesce(sum(in_study), 0) FROM study_participant_tallies WHERE study_id = \(studyId))::int8,
                   ((SELECT coalesce(sum(devices), 0) FROM study_audience_totals WHERE study_id = \(studyId))
                    - (SELECT coalesce(sum(devices), 0) FROM study_audience_devices
                       WHERE study_id = \(studyId) AND expires_hour < epoch_hour(now()))
                    + (SELECT coalesce(sum(devices), 0) FROM study_audience_changes
                       WHERE study_id = \(studyId) AND expires_hour >= epoch_hour(now()))
                    - (SELECT count(*) FROM participant_sessions s
                       JOIN participants p ON p.user_id = s.user_id
                       JOIN participant_studies ps ON ps.user_id = s.user_id AND ps.study_id = \(studyId)
                       WHERE session_takes_pushes(s.revoked_at, s.device_token, s.device_os)
                         AND s.refresh_expires_at >= to_timestamp(epoch_hour(now()) * 3600) AND s.refresh_expires_at <= now()
                         AND takes_notifications(p.settings) AND \(unescaped: Self.joined)))::int8
            """, logger: logger)
        for try await (participants, devices) in rows.decode((Int, Int).self) {
            return StudyAudience(participants: participants, devices: devices)
        }
        return StudyAudience(participants: 0, devices: 0)
    }

    /// Adds the audience's changes written since the last fold to the kept counts, and forgets
    /// the hours past, which count for nothing (`fold_audience_changes`, one fold at a time across
    /// replicas); how many kept rows were written or went.
    package func foldChanges() async throws -> Int {
        var written = 0
        for try await count in try await client.query("SELECT fold_audience_changes()", logger: logger).decode(Int.self) {
            written = count
        }
        return written
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
                      AND \(unescaped: Self.deliverable)
                      AND (\(notification.studyId)::text IS NULL OR EXISTS (
                          SELECT 1 FROM participant_studies ps
                          WHERE ps.user_id = p.user_id AND ps.study_id = \(notification.studyId)::text
                            AND \(unescaped: Self.joined)))
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
