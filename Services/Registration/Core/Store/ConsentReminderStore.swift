import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The reminders a study admin sends those who owe a signature after a consent change
/// (`consent_reminders`), each decided once by the sweep (`ConsentReminders`), with the pushes it
/// queues (`push_outbox`). Who owes one is `owes_consent`, the one definition the participants
/// list uses too.
package struct ConsentReminderStore: Sendable {
    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// What a request asks for: the versions in force, the quiet hours and the push's text.
    package struct Request: Sendable {
        package var studyId: String
        package var consentVersionsInForce: [String]?
        package var quietFrom: String
        package var quietUntil: String
        package var title: String
        package var body: String
        package var requestedBy: String

        package init(
            studyId: String, consentVersionsInForce: [String]?, quietFrom: String, quietUntil: String, title: String, body: String,
            requestedBy: String
        ) {
            self.studyId = studyId
            self.consentVersionsInForce = consentVersionsInForce
            self.quietFrom = quietFrom
            self.quietUntil = quietUntil
            self.title = title
            self.body = body
            self.requestedBy = requestedBy
        }
    }

    /// One reminder for each participant who owes a signature and has none waiting, due now;
    /// audited as one event. How many were added.
    package func request(_ request: Request) async throws -> Int {
        try await client.withTransaction(logger: logger) { connection in
            var added = 0
            for try await _ in try await connection.query(
                """
                INSERT INTO consent_reminders (user_id, study_id, consent_versions, quiet_from, quiet_until, title, body,
                                               requested_by, due_at)
                SELECT ps.user_id, ps.study_id, \(request.consentVersionsInForce)::text[], \(request.quietFrom), \(request.quietUntil),
                       \(request.title), \(request.body), \(request.requestedBy), now()
                FROM participant_studies ps
                WHERE ps.study_id = \(request.studyId)
                  AND owes_consent(ps.signed, ps.status, \(request.consentVersionsInForce)::text[])
                ON CONFLICT (user_id, study_id) WHERE decided_at IS NULL DO NOTHING
                RETURNING 1
                """, logger: logger)
            {
                added += 1
            }
            try await audit.record(
                actor: request.requestedBy, action: "consent.reminders_requested", studyId: request.studyId,
                details: [
                    "count": String(added), "consentVersions": request.consentVersionsInForce?.joined(separator: ",") ?? "any",
                    "quietHours": "\(request.quietFrom)-\(request.quietUntil)",
                ], on: connection)
            return added
        }
    }

    /// A reminder due now, with what deciding it needs.
    package struct Due: Sendable, Equatable {
        package var id: Int64
        package var userId: UUID
        package var studyId: String
        package var quietFrom: String
        package var quietUntil: String
        package var title: String
        package var body: String
        /// The participant's zone as their runs were last counted, if they were.
        package var timeZone: String?
    }

    static let reminders = LeasedClaim(
        "consent_reminders", key: ["id"], due: "due_at <= now()", order: "due_at", leaseColumn: "due_at")

    /// Takes up to `limit` reminders due (`SKIP LOCKED`; replicas share them), leased for `lease`.
    package func claim(limit: Int, lease: Duration) async throws -> [Due] {
        let rows = try await client.query(
            Self.reminders.query(
                returning: """
                    q.id, q.user_id, q.study_id, q.quiet_from, q.quiet_until, q.title, q.body,
                    (SELECT l.time_zone FROM participant_run_ledgers l WHERE l.user_id = q.user_id AND l.study_id = q.study_id)
                    """,
                limit: limit, lease: lease),
            logger: logger)
        var due: [Due] = []
        for try await (id, userId, studyId, from, until, title, body, zone) in rows.decode(
            (Int64, UUID, String, String, String, String, String, String?).self)
        {
            due.append(Due(
                id: id, userId: userId, studyId: studyId, quietFrom: from, quietUntil: until, title: title, body: body, timeZone: zone))
        }
        return due
    }

    /// Moves a claimed reminder to `until` (the end of quiet hours).
    package func postpone(_ due: Due, until: Date) async throws {
        try await client.query(
            "UPDATE consent_reminders SET due_at = \(until) WHERE id = \(due.id) AND decided_at IS NULL", logger: logger)
    }

    /// What became of a reminder.
    package enum Outcome: String, Sendable {
        /// Pushed to each of their devices that takes notifications.
        case queued
        /// They switched notifications off in the app.
        case optedOut = "opted_out"
        /// No device of theirs takes pushes (signed out, no token).
        case noDevice = "no_device"
        /// They signed a version in force since it was asked for.
        case signed
        /// They are no longer in the study.
        case left
    }

    /// Decides `due` in one transaction, once: pushed when they still owe the signature and a
    /// device of theirs takes notifications, recorded with its outcome either way, and audited.
    /// `message` makes the push for the participant's app and org. Nil when it was decided before.
    package func decide(
        _ due: Due, message: @Sendable (String, String) -> NotificationMessage
    ) async throws -> Outcome? {
        try await client.withTransaction(logger: logger) { connection in
            var found: (appId: String, orgId: String, optedIn: Bool, inStudy: Bool, owes: Bool)?
            for try await (appId, orgId, optedIn, inStudy, owes) in try await connection.query(
                """
                SELECT p.app_id, p.org_id, coalesce((p.settings ->> 'remoteNotifications')::boolean, false),
                       ps.user_id IS NOT NULL AND ps.withdrawn_at IS NULL AND ps.status = 'inProgress',
                       coalesce(owes_consent(ps.signed, ps.status, r.consent_versions), false)
                FROM consent_reminders r JOIN participants p ON p.user_id = r.user_id
                LEFT JOIN participant_studies ps ON ps.user_id = r.user_id AND ps.study_id = r.study_id
                WHERE r.id = \(due.id) AND r.decided_at IS NULL
                FOR UPDATE OF r
                """, logger: logger
            ).decode((String, String, Bool, Bool, Bool).self) { found = (appId, orgId, optedIn, inStudy, owes) }
            guard let found else { return nil }
            let devices = try await PushAudienceStore.deliverableDevices(of: due.userId, on: connection, logger: logger)
            let outcome: Outcome =
                !found.inStudy ? .left : !found.owes ? .signed : !found.optedIn ? .optedOut : devices == 0 ? .noDevice : .queued
            let text = outcome == .queued
                ? String(decoding: try JSONEncoder().encode(message(found.appId, found.orgId)), as: UTF8.self) : nil
            try await connection.query(
                """
                UPDATE consent_reminders SET due_at = NULL, decided_at = now(), outcome = \(outcome.rawValue), devices = 0,
                                             message = \(text)::jsonb
                WHERE id = \(due.id)
                """, logger: logger)
            var queued = 0
            if outcome == .queued {
                queued = try await PushAudienceStore.queueReminder(.consent(due.id), to: due.userId, on: connection, logger: logger)
                try await connection.query("UPDATE consent_reminders SET devices = \(queued) WHERE id = \(due.id)", logger: logger)
            }
            try await audit.record(
                actor: "schedule", action: "consent.reminded", studyId: due.studyId,
                details: [
                    "userId": due.userId.uuidString.lowercased(), "reminderId": String(due.id), "outcome": outcome.rawValue,
                    "devices": String(queued),
                ],
                on: connection)
            return outcome
        }
    }

    /// Where the study's consent reminders stand, with how many owe a signature now.
    package func summary(studyId: String, consentVersionsInForce: [String]?) async throws -> ConsentReminderSummary {
        var owing = 0
        // Those in progress without a signature of a version in force (as `owes_consent` says),
        // from the counts kept per set of versions signed (`study_participant_tallies`).
        for try await count in try await client.query(
            """
            SELECT coalesce(sum(in_progress), 0)::bigint FROM study_participant_tallies
            WHERE study_id = \(studyId) AND owes_consent(signed, 'inProgress', \(consentVersionsInForce)::text[])
            """, logger: logger
        ).decode(Int.self) { owing = count }
        var waiting = 0
        var outcomes: [String: Int] = [:]
        for try await (outcome, count) in try await client.query(
            """
            SELECT coalesce(outcome, 'waiting'), count(*)::int FROM consent_reminders
            WHERE study_id = \(studyId) GROUP BY 1
            """, logger: logger
        ).decode((String, Int).self) {
            if outcome == "waiting" { waiting = count } else { outcomes[outcome] = count }
        }
        var last: (Date, String)?
        for try await (at, by) in try await client.query(
            """
            SELECT requested_at, requested_by FROM consent_reminders WHERE study_id = \(studyId)
            ORDER BY id DESC LIMIT 1
            """, logger: logger
        ).decode((Date, String).self) { last = (at, by) }
        return ConsentReminderSummary(
            owing: owing, waiting: waiting, outcomes: outcomes, consentVersionsInForce: consentVersionsInForce,
            lastRequestedAt: last?.0, lastRequestedBy: last?.1)
    }
}
