import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The reminders due (`participant_activity_standings.remind_at`, by its index) and the decision
/// on each (`run_reminders`), with the pushes it queues (`push_outbox`).
package struct RunReminderStore: Sendable {
    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// A reminder due now, with what deciding it needs.
    package struct Due: Sendable, Equatable {
        package var userId: UUID
        package var studyId: String
        package var activityId: String
        package var runId: Int
        package var plannedAt: Date
        /// When the run opened and closes (nil: open while the study runs).
        package var runStart: Date
        package var runEnd: Date?
        package var timeZone: String?

        package init(
            userId: UUID, studyId: String, activityId: String, runId: Int, plannedAt: Date, runStart: Date, runEnd: Date? = nil,
            timeZone: String? = nil
        ) {
            self.userId = userId
            self.studyId = studyId
            self.activityId = activityId
            self.runId = runId
            self.plannedAt = plannedAt
            self.runStart = runStart
            self.runEnd = runEnd
            self.timeZone = timeZone
        }
    }

    /// Activities whose reminder is due, each leased by moving its `remind_at`.
    static let reminders = LeasedClaim(
        "participant_activity_standings", key: ["user_id", "study_id", "activity_id"], due: "remind_at <= now()",
        order: "remind_at", leaseColumn: "remind_at")

    /// Takes up to `limit` reminders due (`SKIP LOCKED`; replicas share them), leased for `lease`:
    /// one never decided (the replica died) is taken again when the lease ends, and a run is
    /// decided once whatever happens (`run_reminders` holds one row per run).
    package func claim(limit: Int, lease: Duration) async throws -> [Due] {
        let rows = try await client.query(
            Self.reminders.query(
                returning: "q.user_id, q.study_id, q.activity_id, q.remind_run_id, q.remind_at, q.due_since, q.due_until, l.time_zone",
                joining: LeasedClaim.Join("participant_run_ledgers l", on: "l.user_id = q.user_id AND l.study_id = q.study_id"),
                limit: limit, lease: lease),
            logger: logger)
        var due: [Due] = []
        for try await (userId, studyId, activityId, runId, planned, start, end, zone) in rows.decode(
            (UUID, String, String, Int?, Date, Date?, Date?, String?).self)
        {
            guard let runId, let start else { continue }
            due.append(Due(
                userId: userId, studyId: studyId, activityId: activityId, runId: runId, plannedAt: planned, runStart: start,
                runEnd: end, timeZone: zone))
        }
        return due
    }

    /// Drops a reminder the study no longer sets, unsent.
    package func release(_ due: Due) async throws {
        try await client.query(
            """
            UPDATE participant_activity_standings SET remind_at = NULL, remind_run_id = NULL
            WHERE user_id = \(due.userId) AND study_id = \(due.studyId) AND activity_id = \(due.activityId)
              AND remind_run_id = \(due.runId)
            """, logger: logger)
    }

    /// Moves a claimed reminder to `until` (the end of quiet hours), for the same run.
    package func postpone(_ due: Due, until: Date) async throws {
        try await client.query(
            """
            UPDATE participant_activity_standings SET remind_at = \(until)
            WHERE user_id = \(due.userId) AND study_id = \(due.studyId) AND activity_id = \(due.activityId)
              AND remind_run_id = \(due.runId)
            """, logger: logger)
    }

    /// What became of a reminder.
    package enum Outcome: String, Sendable {
        /// Pushed to each of their devices that takes notifications.
        case queued
        /// They switched notifications off in the app.
        case optedOut = "opted_out"
        /// No device of theirs takes pushes (signed out, no token).
        case noDevice = "no_device"
        /// They had as many of this activity's reminders as a day of theirs allows.
        case dailyLimit = "daily_limit"
    }

    /// Decides `due` in one transaction: skipped when they left the study or the run is no longer
    /// the one due; else recorded once with its outcome, its pushes queued and audited. `message`
    /// makes the push's text from the reminder's id; `maxPerDay` and `localDay`/`runWeek`
    /// (`YYYY-MM-DD` in their zone) bound and place it. Returns the outcome, nil when skipped.
    package func decide(
        _ due: Due, maxPerDay: Int, localDay: String, runWeek: String, message: @Sendable (Int64, String, String) -> NotificationMessage
    ) async throws -> Outcome? {
        try await client.withTransaction(logger: logger) { connection in
            // Still theirs: in the study, the run still the one to remind of.
            var found: (appId: String, orgId: String, optedIn: Bool)?
            for try await (appId, orgId, optedIn) in try await connection.query(
                """
                SELECT p.app_id, p.org_id, coalesce((p.settings ->> 'remoteNotifications')::boolean, false)
                FROM participant_studies ps JOIN participants p ON p.user_id = ps.user_id
                JOIN participant_activity_standings s
                    ON s.user_id = ps.user_id AND s.study_id = ps.study_id AND s.activity_id = \(due.activityId)
                WHERE ps.user_id = \(due.userId) AND ps.study_id = \(due.studyId) AND ps.withdrawn_at IS NULL
                  AND ps.status NOT IN ('Withdrawn', 'notEligible') AND s.remind_run_id = \(due.runId)
                FOR UPDATE OF s
                """, logger: logger
            ).decode((String, String, Bool).self) { found = (appId, orgId, optedIn) }
            try await connection.query(
                """
                UPDATE participant_activity_standings SET remind_at = NULL, remind_run_id = NULL
                WHERE user_id = \(due.userId) AND study_id = \(due.studyId) AND activity_id = \(due.activityId)
                  AND remind_run_id = \(due.runId)
                """, logger: logger)
            guard let found else { return nil }
            var sentToday = 0
            for try await count in try await connection.query(
                """
                SELECT count(*)::int FROM run_reminders
                WHERE user_id = \(due.userId) AND study_id = \(due.studyId) AND activity_id = \(due.activityId)
                  AND local_day = \(localDay)::date AND outcome = 'queued'
                """, logger: logger
            ).decode(Int.self) { sentToday = count }
            let devices = try await PushAudienceStore.deliverableDevices(of: due.userId, on: connection, logger: logger)
            let outcome: Outcome =
                !found.optedIn ? .optedOut : sentToday >= maxPerDay ? .dailyLimit : devices == 0 ? .noDevice : .queued
            // The id first: a pushed reminder's message names it.
            var nextId: Int64 = 0
            for try await id in try await connection.query("SELECT nextval('run_reminders_id_seq')", logger: logger).decode(Int64.self) {
                nextId = id
            }
            let text = outcome == .queued
                ? String(decoding: try JSONEncoder().encode(message(nextId, found.appId, found.orgId)), as: UTF8.self) : nil
            var reminderId: Int64?
            for try await id in try await connection.query(
                """
                INSERT INTO run_reminders (id, user_id, study_id, activity_id, run_id, run_week, local_day, planned_at, outcome,
                                           devices, message)
                VALUES (\(nextId), \(due.userId), \(due.studyId), \(due.activityId), \(due.runId), \(runWeek)::date,
                        \(localDay)::date, \(due.plannedAt), \(outcome.rawValue), 0, \(text)::jsonb)
                ON CONFLICT (user_id, study_id, activity_id, run_id) DO NOTHING
                RETURNING id
                """, logger: logger
            ).decode(Int64.self) { reminderId = id }
            // Decided before (another replica, a lease that ended): nothing more.
            guard let reminderId else { return nil }
            var queued = 0
            if outcome == .queued {
                queued = try await PushAudienceStore.queueReminder(.run(reminderId), to: due.userId, on: connection, logger: logger)
                try await connection.query(
                    "UPDATE run_reminders SET devices = \(queued) WHERE id = \(reminderId)", logger: logger)
            }
            try await audit.record(
                actor: "schedule", action: "run.reminded", studyId: due.studyId,
                details: [
                    "userId": due.userId.uuidString.lowercased(), "activityId": due.activityId, "runId": String(due.runId),
                    "outcome": outcome.rawValue, "devices": String(queued),
                ],
                on: connection)
            return outcome
        }
    }
}
