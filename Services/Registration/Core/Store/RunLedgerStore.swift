import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Each enrolled participant's standings per activity as last counted (`participant_run_ledgers`,
/// `participant_activity_standings`, `participant_run_weeks`), and when they are to be counted
/// again; the study's weekly sums follow by trigger (`study_run_weeks`). The weeks that change
/// go to the response service through the outbox, for its `RunAdherence` table.
package struct RunLedgerStore: Sendable {
    package let client: PostgresClient
    package let outbox: Outbox
    /// Whether a pooler stands between (a count's statements then go unnamed).
    package let pooling: DatabaseSettings.Pooling
    package let logger: Logger

    package init(client: PostgresClient, outbox: Outbox, pooling: DatabaseSettings.Pooling = .session, logger: Logger) {
        self.client = client
        self.outbox = outbox
        self.pooling = pooling
        self.logger = logger
    }

    /// A participant's ledger taken to be counted, until `leasedUntil`.
    package struct Claimed: Sendable, Equatable {
        package var userId: UUID
        package var studyId: String

        package init(userId: UUID, studyId: String) {
            self.userId = userId
            self.studyId = studyId
        }
    }

    /// Ledgers due to be counted again, each leased by moving its `recount_at`.
    static let recounts = LeasedClaim(
        "participant_run_ledgers", key: ["user_id", "study_id"], due: "recount_at <= now()", order: "recount_at",
        leaseColumn: "recount_at")

    /// Takes up to `limit` ledgers due to be counted (`SKIP LOCKED`: replicas share them), leased
    /// for `lease`: one whose count never gets written is counted again when the lease ends.
    package func claim(limit: Int, lease: Duration) async throws -> [Claimed] {
        let rows = try await client.query(
            Self.recounts.query(returning: "q.user_id, q.study_id", limit: limit, lease: lease), logger: logger)
        var claimed: [Claimed] = []
        for try await (userId, studyId) in rows.decode((UUID, String).self) {
            claimed.append(Claimed(userId: userId, studyId: studyId))
        }
        return claimed
    }

    /// When to remind a participant of an activity's due run.
    package struct Reminder: Sendable, Equatable {
        package var runId: Int
        package var at: Date

        package init(runId: Int, at: Date) {
            self.runId = runId
            self.at = at
        }
    }

    /// Writes a count: the standings of each activity in `tally` (those of activities no longer
    /// scheduled go) with their reminders, its weeks, the zone it was counted in, and when to count
    /// again. Something
    /// that asked for a count while this one ran (a response arrived) moved the lease's time back
    /// to its own; that earlier time is kept.
    /// A reminder is kept for the run it names unless that run was reminded of already.
    ///
    /// Its commit does not wait for the disk: everything a count writes is counted again from what
    /// it read, and the claim's lease, committed before, brings back a ledger whose count was
    /// never written. A crash may lose the last moment's counts, each whole with the weeks it
    /// queued, and they are counted again when their leases end. Waiting for the flush held each
    /// count's shard of the study's sums for it, and the sweep's counts queued behind one another.
    /// The weeks queued wake the delivery workers at `wakeDeliveries()`, once a round.
    package func write(
        _ claimed: Claimed, zone: ParticipantZone, tally: RunTally, reminders: [String: Reminder], recountAt: Date
    ) async throws {
        let pooling = self.pooling
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            for try await _ in try await connection.run(
                LedgerCountedStatement(
                    userId: claimed.userId, studyId: claimed.studyId, timeZone: zone.zone.identifier,
                    timeZoneSource: zone.source.rawValue, recountAt: recountAt), pooling: pooling, logger: logger) {}
            for try await _ in try await connection.run(
                DropStandingsStatement(userId: claimed.userId, studyId: claimed.studyId, activityIds: tally.activities.map(\.activityId)),
                pooling: pooling, logger: logger) {}
            var standings = StandingRows(userId: claimed.userId, studyId: claimed.studyId)
            for activity in tally.activities { standings.append(activity, reminder: reminders[activity.activityId]) }
            for try await _ in try await connection.run(standings, pooling: pooling, logger: logger) {}
            var weeks = WeekRows(userId: claimed.userId, studyId: claimed.studyId)
            for activity in tally.activities {
                for week in activity.weeks { weeks.append(activity.activityId, week) }
            }
            var changed: [RunAdherenceUpdate.Week] = []
            for try await (activityId, week, opened, completed, missed, expired, notStored) in try await connection.run(
                weeks, pooling: pooling, logger: logger)
            {
                changed.append(.init(
                    activityId: activityId, week: week, opened: opened, completed: completed, missed: missed, expired: expired,
                    notStored: notStored))
            }
            try await sendWeeks(claimed, changed: changed, on: connection)
        }
    }

    /// Queues the weeks that changed for the response service, once it can know the participant
    /// (registration has the hash of the id their app holds); every week of theirs the first time
    /// under a hash.
    private func sendWeeks(_ claimed: Claimed, changed: [RunAdherenceUpdate.Week], on connection: PostgresConnection) async throws {
        var found: (hash: String?, sentTo: String?)?
        for try await row in try await connection.run(
            WeeksSentToStatement(userId: claimed.userId, studyId: claimed.studyId), pooling: pooling, logger: logger)
        {
            found = (row.0, row.1)
        }
        guard let found, let hash = found.hash else { return }
        var weeks = changed
        if found.sentTo != hash {
            weeks = []
            for try await (activityId, week, opened, completed, missed, expired, notStored) in try await connection.query(
                """
                SELECT activity_id, to_char(week, 'YYYY-MM-DD'), runs_opened, runs_completed, runs_missed, runs_expired, runs_not_stored
                FROM participant_run_weeks WHERE user_id = \(claimed.userId) AND study_id = \(claimed.studyId)
                ORDER BY activity_id, week
                """, logger: logger
            ).decode((String, String, Int, Int, Int, Int, Int).self) {
                weeks.append(.init(
                    activityId: activityId, week: week, opened: opened, completed: completed, missed: missed, expired: expired,
                    notStored: notStored))
            }
            try await connection.query(
                """
                UPDATE participant_run_ledgers SET weeks_sent_to = \(hash)
                WHERE user_id = \(claimed.userId) AND study_id = \(claimed.studyId)
                """, logger: logger)
        }
        let countedAt = Date()
        for start in stride(from: 0, to: weeks.count, by: RunAdherenceUpdate.maxWeeks) {
            let update = RunAdherenceUpdate(
                participantTokenSHA256: hash, countedAt: countedAt,
                weeks: Array(weeks[start..<min(start + RunAdherenceUpdate.maxWeeks, weeks.count)]))
            try await outbox.enqueue(
                InternalCalls.runWeeks, ["studyId": claimed.studyId], payload: update, wakingWorkers: false, on: connection)
        }
    }

    /// Wakes the workers that deliver the weeks the counts queued.
    package func wakeDeliveries() async throws {
        try await outbox.wakeWorkers()
    }
}

/// A participant's standings, an activity each, as arrays: one statement writes them all (a
/// study of twenty activities would otherwise take twenty round trips a count), and only those
/// that changed (at midnight every participant is counted again, and most of their activities
/// stand as they stood: rewriting them made a new version of each row and its index entries,
/// for vacuum to clear). A reminder is kept for the run it names unless that run was reminded of
/// already. Arrays of optionals cannot
/// be bound: an empty text stands for none, instants are written to the millisecond. Prepared
/// once per connection, as every statement of a count is (RunCountStatements.swift).
struct StandingRows: PostgresPreparedStatement {
    var userId: UUID
    var studyId: String
    var activities: [String] = []
    var counts: [[Int]] = [[], [], [], [], [], []]
    var optionals: [[String]] = [[], [], [], [], [], [], []]

    mutating func append(_ activity: ActivityTally, reminder: RunLedgerStore.Reminder?) {
        activities.append(activity.activityId)
        for (index, value) in [
            activity.opened, activity.completed, activity.missed, activity.expired, activity.missedInARow, activity.notStored,
        ].enumerated() {
            counts[index].append(value)
        }
        let instant = { (date: Date?) in date.map(GregorianDays.text) ?? "" }
        let values = [
            activity.due.map { String($0.runId) } ?? "", instant(activity.due?.start), instant(activity.due?.end),
            instant(activity.nextRunAt), instant(activity.lastCompletedAt), reminder.map { String($0.runId) } ?? "", instant(reminder?.at),
        ]
        for (index, value) in values.enumerated() { optionals[index].append(value) }
    }

    init(userId: UUID, studyId: String) {
        self.userId = userId
        self.studyId = studyId
    }

    static let bindingDataTypes: [PostgresDataType] = [.uuid, .text, .textArray] + Array(repeating: .int8Array, count: 6)
        + Array(repeating: .textArray, count: 7)
    typealias Row = Void

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 16)
        bindings.append(userId)
        bindings.append(studyId)
        bindings.append(activities)
        for column in counts { bindings.append(column) }
        for column in optionals { bindings.append(column) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {}

    static let sql = """
        INSERT INTO participant_activity_standings (user_id, study_id, activity_id, runs_opened, runs_completed, runs_missed,
            runs_expired, missed_in_a_row, runs_not_stored, due_run_id, due_since, due_until, next_run_at, last_completed_at,
            remind_run_id, remind_at)
        SELECT $1, $2, t.activity, t.opened, t.completed, t.missed, t.expired, t.in_a_row, t.not_stored,
            NULLIF(t.due_run, '')::int, NULLIF(t.due_since, '')::timestamptz, NULLIF(t.due_until, '')::timestamptz,
            NULLIF(t.next_run, '')::timestamptz, NULLIF(t.last_completed, '')::timestamptz,
            CASE WHEN done.id IS NULL THEN NULLIF(t.remind_run, '')::int END,
            CASE WHEN done.id IS NULL THEN NULLIF(t.remind_at, '')::timestamptz END
        FROM unnest($3::text[], $4::int[], $5::int[], $6::int[], $7::int[],
                    $8::int[], $9::int[], $10::text[], $11::text[], $12::text[],
                    $13::text[], $14::text[], $15::text[], $16::text[])
            AS t(activity, opened, completed, missed, expired, in_a_row, not_stored, due_run, due_since, due_until, next_run,
                 last_completed, remind_run, remind_at)
        LEFT JOIN run_reminders done ON done.user_id = $1 AND done.study_id = $2 AND done.activity_id = t.activity
            AND done.run_id = NULLIF(t.remind_run, '')::int
        ON CONFLICT (user_id, study_id, activity_id) DO UPDATE SET runs_opened = EXCLUDED.runs_opened,
            runs_completed = EXCLUDED.runs_completed, runs_missed = EXCLUDED.runs_missed,
            runs_expired = EXCLUDED.runs_expired, missed_in_a_row = EXCLUDED.missed_in_a_row,
            runs_not_stored = EXCLUDED.runs_not_stored,
            due_run_id = EXCLUDED.due_run_id, due_since = EXCLUDED.due_since, due_until = EXCLUDED.due_until,
            next_run_at = EXCLUDED.next_run_at, last_completed_at = EXCLUDED.last_completed_at,
            remind_run_id = EXCLUDED.remind_run_id, remind_at = EXCLUDED.remind_at
        WHERE (participant_activity_standings.runs_opened, participant_activity_standings.runs_completed,
               participant_activity_standings.runs_missed, participant_activity_standings.runs_expired,
               participant_activity_standings.missed_in_a_row, participant_activity_standings.runs_not_stored,
               participant_activity_standings.due_run_id, participant_activity_standings.due_since,
               participant_activity_standings.due_until, participant_activity_standings.next_run_at,
               participant_activity_standings.last_completed_at, participant_activity_standings.remind_run_id,
               participant_activity_standings.remind_at)
              IS DISTINCT FROM (EXCLUDED.runs_opened, EXCLUDED.runs_completed, EXCLUDED.runs_missed, EXCLUDED.runs_expired,
                                EXCLUDED.missed_in_a_row, EXCLUDED.runs_not_stored, EXCLUDED.due_run_id, EXCLUDED.due_since,
                                EXCLUDED.due_until, EXCLUDED.next_run_at, EXCLUDED.last_completed_at, EXCLUDED.remind_run_id,
                                EXCLUDED.remind_at)
        """
}

/// A participant's weeks as arrays: those no longer counted go, the others are written where
/// they changed (a row unchanged is not touched, so the study's sums are not either). Returns
/// the rows written and, with counts of zero, those gone. Prepared once per connection.
struct WeekRows: PostgresPreparedStatement {
    var userId: UUID
    var studyId: String
    var activities: [String] = []
    var mondays: [String] = []
    var opened: [Int] = []
    var completed: [Int] = []
    var missed: [Int] = []
    var expired: [Int] = []
    var notStored: [Int] = []

    mutating func append(_ activityId: String, _ week: ActivityTally.Week) {
        activities.append(activityId)
        mondays.append(GregorianDays.dateText(week.monday))
        opened.append(week.opened)
        completed.append(week.completed)
        missed.append(week.missed)
        expired.append(week.expired)
        notStored.append(week.notStored)
    }

    init(userId: UUID, studyId: String) {
        self.userId = userId
        self.studyId = studyId
    }

    static let bindingDataTypes: [PostgresDataType] = [.uuid, .text, .textArray, .textArray] + Array(repeating: .int8Array, count: 5)
    typealias Row = (String, String, Int, Int, Int, Int, Int)

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 9)
        bindings.append(userId)
        bindings.append(studyId)
        bindings.append(activities)
        bindings.append(mondays)
        for column in [opened, completed, missed, expired, notStored] { bindings.append(column) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }

    static let sql = """
        WITH counted AS (
            SELECT * FROM unnest($3::text[], $4::date[], $5::int[], $6::int[], $7::int[],
                                 $8::int[], $9::int[]) AS t(activity, week, opened, completed, missed, expired, not_stored)
        ), gone AS (
            DELETE FROM participant_run_weeks w
            WHERE w.user_id = $1 AND w.study_id = $2
              AND NOT EXISTS (SELECT 1 FROM counted c WHERE c.activity = w.activity_id AND c.week = w.week)
            RETURNING w.activity_id, w.week
        ), written AS (
            INSERT INTO participant_run_weeks (user_id, study_id, activity_id, week, runs_opened, runs_completed, runs_missed, runs_expired,
                                               runs_not_stored)
            SELECT $1, $2, activity, week, opened, completed, missed, expired, not_stored FROM counted
            ON CONFLICT (user_id, study_id, activity_id, week) DO UPDATE SET runs_opened = EXCLUDED.runs_opened,
                runs_completed = EXCLUDED.runs_completed, runs_missed = EXCLUDED.runs_missed, runs_expired = EXCLUDED.runs_expired,
                runs_not_stored = EXCLUDED.runs_not_stored
            WHERE (participant_run_weeks.runs_opened, participant_run_weeks.runs_completed, participant_run_weeks.runs_missed,
                   participant_run_weeks.runs_expired, participant_run_weeks.runs_not_stored)
                  IS DISTINCT FROM (EXCLUDED.runs_opened, EXCLUDED.runs_completed, EXCLUDED.runs_missed, EXCLUDED.runs_expired,
                                    EXCLUDED.runs_not_stored)
            RETURNING activity_id, week, runs_opened, runs_completed, runs_missed, runs_expired, runs_not_stored
        )
        SELECT activity_id, to_char(week, 'YYYY-MM-DD'), runs_opened, runs_completed, runs_missed, runs_expired, runs_not_stored
        FROM written
        UNION ALL
        SELECT activity_id, to_char(week, 'YYYY-MM-DD'), 0, 0, 0, 0, 0 FROM gone
        """
}
