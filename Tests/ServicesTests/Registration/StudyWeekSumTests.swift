import Foundation
import Logging
import PostgresNIO
import RegistrationCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The study's weekly sums registration keeps (`study_run_weeks`, `study_reminder_weeks`, each
/// in sixteen rows a week) against the same sums taken over every participant's rows, as the
/// study's weeks view took them before they were kept: after a random history of counted weeks,
/// reminders decided and accounts deleted, from one connection and from several at once.
@Suite(.needsCluster) struct StudyWeekSumTests {
    static let studyId = "WEEKSUMS"
    static let activities = ["diary", "walk"]
    static let outcomes = ["queued", "opted_out", "no_device", "daily_limit"]
    /// Three weeks from Monday 2 November 2026.
    static let mondays = GregorianDays.days(year: 2026, month: 11, day: 2)...GregorianDays.days(year: 2026, month: 11, day: 16)

    static func week(_ random: inout SeededRandom) -> String {
        GregorianDays.dateText(mondays.lowerBound + 7 * random.next(3))
    }

    /// The weeks as the view read them before the sums were kept: every participant's rows summed.
    static func overEveryRow(_ postgres: PostgresClient, _ logger: Logger) async throws -> StudyRunWeeks {
        var activities: [StudyRunWeeks.Activity] = []
        for try await (activityId, week, opened, completed, missed, expired, notStored, reminded, other) in try await postgres.query(
            """
            SELECT w.activity_id, to_char(w.week, 'YYYY-MM-DD'), w.opened, w.completed, w.missed, w.expired, w.not_stored,
                   coalesce(r.pushed, 0)::int, coalesce(r.other, 0)::int
            FROM (SELECT activity_id, week, sum(runs_opened)::int AS opened, sum(runs_completed)::int AS completed,
                         sum(runs_missed)::int AS missed, sum(runs_expired)::int AS expired, sum(runs_not_stored)::int AS not_stored
                  FROM participant_run_weeks WHERE study_id = \(studyId) GROUP BY 1, 2) w
            LEFT JOIN (SELECT activity_id, run_week, count(*) FILTER (WHERE outcome = 'queued') AS pushed,
                              count(*) FILTER (WHERE outcome <> 'queued') AS other
                       FROM run_reminders WHERE study_id = \(studyId) GROUP BY 1, 2) r
                ON r.activity_id = w.activity_id AND r.run_week = w.week
            WHERE w.opened > 0
            ORDER BY 1, 2
            """, logger: logger
        ).decode((String, String, Int, Int, Int, Int, Int, Int, Int).self) {
            if activities.last?.activityId != activityId { activities.append(.init(activityId: activityId, weeks: [])) }
            activities[activities.count - 1].weeks.append(
                RunWeek(
                    week: week, opened: opened, completed: completed, missed: missed, expired: expired, notStored: notStored,
                    reminded: reminded, notReminded: other))
        }
        return StudyRunWeeks(
            from: GregorianDays.dateText(mondays.lowerBound), to: GregorianDays.dateText(mondays.upperBound), activities: activities)
    }

    static func kept(_ postgres: PostgresClient, _ logger: Logger) async throws -> StudyRunWeeks {
        try await RunReportStore(client: postgres, logger: logger).studyWeeks(studyId: studyId, mondays: mondays)
    }

    /// One random change of a participant's counted weeks or reminders, or their account.
    static func change(
        _ random: inout SeededRandom, users: [UUID], on connection: PostgresConnection, logger: Logger, deleting: Bool = true
    ) async throws {
        let user = users[random.next(users.count)]
        let activity = activities[random.next(activities.count)]
        let week = week(&random)
        switch random.next(deleting ? 8 : 6) {
        case 0, 1, 2:
            // A count: the week's runs, the opened ones at least what became of them.
            let (completed, missed, expired, notStored) = (random.next(3), random.next(3), random.next(2), random.next(2))
            let opened = completed + missed + expired + notStored + random.next(2)
            try await connection.query(
                """
                INSERT INTO participant_run_weeks (user_id, study_id, activity_id, week, runs_opened, runs_completed, runs_missed,
                                                   runs_expired, runs_not_stored)
                VALUES (\(user), \(studyId), \(activity), \(week)::date, \(opened), \(completed), \(missed), \(expired), \(notStored))
                ON CONFLICT (user_id, study_id, activity_id, week) DO UPDATE SET runs_opened = excluded.runs_opened,
                    runs_completed = excluded.runs_completed, runs_missed = excluded.runs_missed,
                    runs_expired = excluded.runs_expired, runs_not_stored = excluded.runs_not_stored
                """, logger: logger)
        case 3:
            try await connection.query(
                """
                DELETE FROM participant_run_weeks
                WHERE user_id = \(user) AND study_id = \(studyId) AND activity_id = \(activity) AND week = \(week)::date
                """, logger: logger)
        case 4:
            let outcome = outcomes[random.next(outcomes.count)]
            try await connection.query(
                """
                INSERT INTO run_reminders (user_id, study_id, activity_id, run_id, run_week, local_day, planned_at, outcome, devices,
                                           message)
                VALUES (\(user), \(studyId), \(activity), \(random.next(40)), \(week)::date, \(week)::date, now(), \(outcome),
                        \(outcome == "queued" ? 1 : 0), \(outcome == "queued" ? "{}" : nil)::jsonb)
                ON CONFLICT (user_id, study_id, activity_id, run_id) DO NOTHING
                """, logger: logger)
        case 5:
            // The devices a pushed reminder went to, written after it: what it counts for stays.
            try await connection.query(
                "UPDATE run_reminders SET devices = devices + 1 WHERE user_id = \(user) AND activity_id = \(activity)",
                logger: logger)
        case 6:
            try await connection.query(
                """
                DELETE FROM run_reminders
                WHERE id = (SELECT id FROM run_reminders WHERE user_id = \(user) AND activity_id = \(activity) ORDER BY id LIMIT 1)
                """, logger: logger)
        default:
            // The account deleted (its ledger, weeks and reminders with it), then made again.
            try await connection.query("DELETE FROM participants WHERE user_id = \(user)", logger: logger)
            try await insertAccount(user, on: connection, logger: logger)
        }
    }

    /// An account with a ledger in the study, never due: the sweep leaves its weeks as written here.
    static func insertAccount(_ user: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await StudyTallyTests.insertAccount(user, on: connection, logger: logger)
        try await connection.query(
            "INSERT INTO participant_run_ledgers (user_id, study_id, recount_at) VALUES (\(user), \(studyId), 'infinity')",
            logger: logger)
    }

    @Test func theKeptSumsAreTheSumsOverEveryRowAfterARandomHistory() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "weeksums")
            let users = (0..<10).map { _ in UUID() }
            try await h.postgres.withConnection { connection in
                for user in users { try await Self.insertAccount(user, on: connection, logger: logger) }
                var random = SeededRandom(seed: 20_261_207)
                for step in 1...500 {
                    try await Self.change(&random, users: users, on: connection, logger: logger)
                    guard step % 50 == 0 else { continue }
                    let counted = try await Self.overEveryRow(h.postgres, logger)
                    #expect(try await Self.kept(h.postgres, logger) == counted, "after \(step) changes")
                }
            }
            let counted = try await Self.overEveryRow(h.postgres, logger)
            let weeks = counted.activities.flatMap(\.weeks)
            #expect(weeks.count >= 4, "the history left weeks to sum: \(counted)")
            #expect(weeks.contains { ($0.reminded ?? 0) > 0 } && weeks.contains { ($0.notReminded ?? 0) > 0 }, "and reminders of both kinds")
            // Every change of a week is one of its participant's shard: more than one row a week.
            var shards = 0
            for try await count in try await h.postgres.query(
                "SELECT count(DISTINCT shard)::int FROM study_run_weeks WHERE study_id = \(Self.studyId)", logger: logger
            ).decode(Int.self) { shards = count }
            #expect(shards > 1)
        }
    }

    @Test func theKeptSumsStayExactWhenCountsRunAtOnce() async throws {
        try await RegistrationHarness.run { h in
            let logger = Logger(label: "weeksums")
            let users = (0..<8).map { _ in UUID() }
            try await h.postgres.withConnection { connection in
                for user in users { try await Self.insertAccount(user, on: connection, logger: logger) }
            }
            // Four connections write the same weeks of the same participants at once, a few
            // changes a transaction, as the sweep's counts do at midnight; a deadlock rolls one
            // back whole, and nothing it rolled back may stay summed.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for transaction in 0..<100 {
                            do {
                                try await h.postgres.withTransaction(logger: logger) { connection in
                                    var random = SeededRandom(seed: UInt64(worker * 1_000 + transaction))
                                    for _ in 0..<3 {
                                        try await Self.change(&random, users: users, on: connection, logger: logger, deleting: false)
                                    }
                                }
                            } catch let error as PostgresTransactionError
                                where ["40P01", "23505"].contains((error.closureError as? PSQLError)?.serverInfo?[.sqlState])
                            {
                                // A deadlock, or two writing the same new row at once: rolled back whole.
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let counted = try await Self.overEveryRow(h.postgres, logger)
            #expect(!counted.activities.isEmpty)
            #expect(try await Self.kept(h.postgres, logger) == counted)
        }
    }
}
