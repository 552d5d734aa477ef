import Foundation
import Logging
import PostgresNIO
import StudyModels

/// Reads the kept standings for the study-wide views: the study's runs per week, who is behind
/// right now, one participant's weekly report. Rows as last counted; nothing is expanded here.
package struct RunReportStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The study's runs per activity and week, for the weeks whose Mondays are in `mondays`
    /// (`GregorianDays` numbering), with the reminders decided of their runs: the sixteen shards
    /// of each week's sums added up.
    package func studyWeeks(studyId: String, mondays: ClosedRange<Int>) async throws -> StudyRunWeeks {
        let rows = try await client.query(
            """
            SELECT w.activity_id, to_char(w.week, 'YYYY-MM-DD'), w.runs_opened, w.runs_completed, w.runs_missed, w.runs_expired,
                   w.runs_not_stored, coalesce(r.pushed, 0)::int, coalesce(r.other, 0)::int
            FROM (SELECT activity_id, week, sum(runs_opened)::int AS runs_opened, sum(runs_completed)::int AS runs_completed,
                         sum(runs_missed)::int AS runs_missed, sum(runs_expired)::int AS runs_expired,
                         sum(runs_not_stored)::int AS runs_not_stored
                  FROM study_run_weeks
                  WHERE study_id = \(studyId)
                    AND week BETWEEN \(GregorianDays.dateText(mondays.lowerBound))::date AND \(GregorianDays.dateText(mondays.upperBound))::date
                  GROUP BY activity_id, week) w
            LEFT JOIN (SELECT activity_id, week, sum(pushed) AS pushed, sum(not_pushed) AS other
                       FROM study_reminder_weeks
                       WHERE study_id = \(studyId)
                         AND week BETWEEN \(GregorianDays.dateText(mondays.lowerBound))::date AND \(GregorianDays.dateText(mondays.upperBound))::date
                       GROUP BY activity_id, week) r ON r.activity_id = w.activity_id AND r.week = w.week
            WHERE w.runs_opened > 0
            ORDER BY w.activity_id, w.week
            """, logger: logger)
        var activities: [StudyRunWeeks.Activity] = []
        for try await (activityId, week, opened, completed, missed, expired, notStored, reminded, other) in rows.decode(
            (String, String, Int, Int, Int, Int, Int, Int, Int).self)
        {
            if activities.last?.activityId != activityId { activities.append(.init(activityId: activityId, weeks: [])) }
            activities[activities.count - 1].weeks.append(
                RunWeek(
                    week: week, opened: opened, completed: completed, missed: missed, expired: expired, notStored: notStored,
                    reminded: reminded, notReminded: other))
        }
        return StudyRunWeeks(from: GregorianDays.dateText(mondays.lowerBound), to: GregorianDays.dateText(mondays.upperBound), activities: activities)
    }

    /// Where a page of `behind` goes on from: the last entry's place in its order.
    package struct BehindCursor: Sendable, Equatable {
        package var missedInARow: Int
        package var participantId: UUID
        package var activityId: String

        package init(missedInARow: Int, participantId: UUID, activityId: String) {
            self.missedInARow = missedInARow
            self.participantId = participantId
            self.activityId = activityId
        }
    }

    /// Participants still in the study who missed at least `atLeast` runs in a row of an activity
    /// (`activityId`, or any), most behind first (those equally behind in a fixed order), up to
    /// `limit`, after `cursor`.
    package func behind(studyId: String, activityId: String?, atLeast: Int, limit: Int, after cursor: BehindCursor?) async throws
        -> [(BehindCursor, ParticipantsBehind.Entry)]
    {
        let rows = try await client.query(
            """
            SELECT ps.pseudonym, site.name, s.activity_id, s.missed_in_a_row, s.runs_opened, s.runs_completed, s.runs_missed,
                   app.runs_completed, app.runs_missed, s.last_completed_at, s.due_run_id, s.due_until,
                   greatest((SELECT max(x.last_used_at) FROM participant_sessions x WHERE x.user_id = ps.user_id),
                            (SELECT max(r.received_at) FROM response_arrivals r
                             WHERE r.study_id = ps.study_id AND r.participant_token_hash = ps.participant_token_hash)),
                   l.time_zone, ps.participant_token_hash
            FROM participant_activity_standings s
            JOIN participant_studies ps ON ps.user_id = s.user_id AND ps.study_id = s.study_id
            JOIN participant_run_ledgers l ON l.user_id = s.user_id AND l.study_id = s.study_id
            LEFT JOIN study_sites site ON site.id = ps.site_id
            LEFT JOIN participant_activities app
                ON app.user_id = s.user_id AND app.study_id = s.study_id AND app.activity_id = s.activity_id
            WHERE s.study_id = \(studyId) AND s.missed_in_a_row >= \(max(1, atLeast)) AND ps.withdrawn_at IS NULL
              AND (\(activityId)::text IS NULL OR s.activity_id = \(activityId))
              AND (\(cursor?.missedInARow)::int IS NULL OR s.missed_in_a_row < \(cursor?.missedInARow)::int
                   OR (s.missed_in_a_row = \(cursor?.missedInARow)::int AND (s.user_id, s.activity_id COLLATE "C") >
                       -- Those equally behind go by account: the one the cursor's participant id names.
                       ((SELECT c.user_id FROM participant_studies c
                         WHERE c.study_id = \(studyId) AND c.pseudonym = \(cursor?.participantId)::uuid),
                        \(cursor?.activityId)::text COLLATE "C")))
            -- The order of participant_activity_standings_behind_order (and, for one activity,
            -- of _behind_activity): a page reads a page of the index however many are behind.
            ORDER BY s.missed_in_a_row DESC, s.user_id, s.activity_id COLLATE "C"
            LIMIT \(limit)
            """, logger: logger)
        var found: [(BehindCursor, ParticipantsBehind.Entry)] = []
        for try await row in rows.decode(
            (UUID, String?, String, Int, Int, Int, Int, Int?, Int?, Date?, Int?, Date?, Date?, String?, String?).self)
        {
            let (pseudonym, site, activity, inARow, opened, completed, missed, appCompleted, appMissed, lastCompleted, dueRun, dueUntil,
                 contact, zone, tokenHash) = row
            let place = BehindCursor(missedInARow: inARow, participantId: pseudonym, activityId: activity)
            let tz = zone.flatMap(TimeZone.init(identifier:)) ?? .gmt
            let text = { (date: Date) in WallClock.rfc3339(date, in: tz) }
            found.append((place, ParticipantsBehind.Entry(
                participantId: pseudonym.uuidString.lowercased(), site: site, activityId: activity, missedInARow: inARow,
                opened: opened, completed: completed, missed: missed, appCompleted: appCompleted, appMissed: appMissed,
                lastCompletedAt: lastCompleted.map(text), dueRunId: dueRun, dueUntil: dueUntil.map(text),
                lastContact: contact.map(text), timeZone: zone, appTokenSHA256: tokenHash)))
        }
        return found
    }

    /// One participant's latest `weeks` weeks in which a run opened, newest first; nil when the
    /// study has no such participant.
    package func participantWeeks(studyId: String, participantId: UUID, weeks: Int) async throws -> ParticipantRunWeeks? {
        var ledger: (userId: UUID, zone: String?, counted: Date?)?
        for try await (userId, zone, counted) in try await client.query(
            """
            SELECT ps.user_id, l.time_zone, l.counted_at FROM participant_studies ps
            LEFT JOIN participant_run_ledgers l ON l.user_id = ps.user_id AND l.study_id = ps.study_id
            WHERE ps.study_id = \(studyId) AND ps.pseudonym = \(participantId)
            """, logger: logger
        ).decode((UUID, String?, Date?).self) { ledger = (userId, zone, counted) }
        guard let ledger else { return nil }
        let rows = try await client.query(
            """
            SELECT to_char(w.week, 'YYYY-MM-DD'), w.activity_id, w.runs_opened, w.runs_completed, w.runs_missed, w.runs_expired,
                   w.runs_not_stored
            FROM participant_run_weeks w
            WHERE w.user_id = \(ledger.userId) AND w.study_id = \(studyId)
              AND w.week IN (SELECT DISTINCT week FROM participant_run_weeks
                             WHERE user_id = \(ledger.userId) AND study_id = \(studyId) ORDER BY week DESC LIMIT \(weeks))
            ORDER BY w.week DESC, w.activity_id
            """, logger: logger)
        var report: [ParticipantRunWeeks.Week] = []
        for try await (week, activity, opened, completed, missed, expired, notStored) in rows.decode(
            (String, String, Int, Int, Int, Int, Int).self)
        {
            if report.last?.week != week { report.append(.init(week: week, activities: [], adherencePercent: nil)) }
            report[report.count - 1].activities.append(
                .init(activityId: activity, opened: opened, completed: completed, missed: missed, expired: expired, notStored: notStored))
        }
        for index in report.indices {
            let done = report[index].activities.reduce(0) { $0 + $1.completed }
            let missed = report[index].activities.reduce(0) { $0 + $1.missed }
            report[index].adherencePercent = RunWeek(week: "", opened: 0, completed: done, missed: missed, expired: 0).adherencePercent
        }
        let zone = ledger.zone.flatMap(TimeZone.init(identifier:)) ?? .gmt
        return ParticipantRunWeeks(
            timeZone: ledger.zone, countedAt: ledger.counted.map { WallClock.rfc3339($0, in: zone) }, weeks: report)
    }
}
