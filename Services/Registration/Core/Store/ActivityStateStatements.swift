import Foundation
import PostgresNIO
import ServiceKit
import StudyModels

/// The activity-state upsert: what `updateActivityState` (the apps' most frequent write) runs, so
/// it is prepared once per connection. The `WHERE` of the conflict branch is
/// `StudyStates.isFresher`: a stored non-numeric run id, a later run, or the same run at the
/// same or a later state replaces the row; anything else leaves it.
package struct UpsertActivityStatement: PostgresPreparedStatement {
    package static let sql = """
        INSERT INTO participant_activities AS stored (user_id, study_id, activity_id, activity_version, activity_state,
            activity_run_id, bookmarked, runs_total, runs_completed, runs_missed, activity_start_date,
            activity_end_date, anchor_date_version, anchor_date_created_date, custom_schedule_runs, updated_at)
        VALUES ($1, $2, $3, coalesce($4, ''), coalesce($5, 'yetToJoin'), coalesce($6, ''), coalesce($7, false),
            coalesce($8, 0), coalesce($9, 0), coalesce($10, 0), coalesce($11, ''), coalesce($12, ''),
            coalesce($13, ''), coalesce($14, ''), coalesce($15::jsonb, '[]'), $16)
        ON CONFLICT (user_id, study_id, activity_id) DO UPDATE SET
            activity_version = coalesce($4, stored.activity_version),
            activity_state = coalesce($5, stored.activity_state),
            activity_run_id = coalesce($6, stored.activity_run_id),
            bookmarked = coalesce($7, stored.bookmarked),
            runs_total = coalesce($8, stored.runs_total),
            runs_completed = coalesce($9, stored.runs_completed),
            runs_missed = coalesce($10, stored.runs_missed),
            activity_start_date = coalesce($11, stored.activity_start_date),
            activity_end_date = coalesce($12, stored.activity_end_date),
            anchor_date_version = coalesce($13, stored.anchor_date_version),
            anchor_date_created_date = coalesce($14, stored.anchor_date_created_date),
            custom_schedule_runs = coalesce($15::jsonb, stored.custom_schedule_runs),
            updated_at = $16
        WHERE $17 IS NULL
            OR stored.activity_run_id !~ '^[0-9]{1,18}$'
            OR $17 > (CASE WHEN stored.activity_run_id ~ '^[0-9]{1,18}$' THEN stored.activity_run_id::bigint END)
            OR ($17 = (CASE WHEN stored.activity_run_id ~ '^[0-9]{1,18}$' THEN stored.activity_run_id::bigint END)
                AND ($18 IS NULL OR $18 >= CASE stored.activity_state
                    WHEN 'yetToJoin' THEN 0 WHEN 'inProgress' THEN 1 ELSE 2 END))
        """
    package static let bindingDataTypes: [PostgresDataType] = [
        .uuid, .text, .text, .text, .text, .text, .bool, .int4, .int4, .int4, .text, .text, .text, .text, .text,
        .timestamptz, .int8, .int4,
    ]
    package typealias Row = Void

    package var update: StudyStates.ActivityUpdate
    package var userId: UUID
    package var now: Date
    /// `customScheduleRuns` as JSON text.
    package var runs: String?

    package init(update: StudyStates.ActivityUpdate, userId: UUID, now: Date) throws {
        self.update = update
        self.userId = userId
        self.now = now
        runs = try update.customScheduleRuns.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
    }

    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 18)
        bindings.append(userId)
        bindings.append(update.studyId)
        bindings.append(update.activityId)
        bindings.append(update.activityVersion)
        bindings.append(update.activityState)
        bindings.append(update.activityRunId)
        bindings.append(update.bookmarked)
        bindings.append(update.run.map { Int32(clamping: $0.total) })
        bindings.append(update.run.map { Int32(clamping: $0.completed) })
        bindings.append(update.run.map { Int32(clamping: $0.missed) })
        bindings.append(update.activityStartDate)
        bindings.append(update.activityEndDate)
        bindings.append(update.anchorDateVersion)
        bindings.append(update.anchorDatecreatedDate)
        bindings.append(runs)
        bindings.append(now)
        bindings.append(StudyStates.runNumber(update.activityRunId))
        bindings.append(update.activityState.map { Int32(StudyStates.rank($0)) })
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws {}
}

extension StudyStateStore {
    /// Leaves a study: status `Withdrawn`; with `deleteData`, the activity states and the link to the
    /// response service's participant go too. A participant who never joined, or left already, is
    /// refused with the original server's words (`RegistrationError.invalid`).
    package func withdraw(userId: UUID, studyId: String, deleteData: Bool) async throws {
        // The refusal is thrown once the transaction has ended: one thrown inside would reach the
        // caller wrapped in the driver's transaction error.
        let refusal = try await client.withTransaction(logger: logger) { connection -> RegistrationError? in
            let rows = try await connection.query(
                "SELECT status FROM participant_studies WHERE user_id = \(userId) AND study_id = \(studyId) FOR UPDATE",
                logger: logger)
            var status: String?
            for try await value in rows.decode(String.self) { status = value }
            guard let status else { return .invalid("You have not joined this study.") }
            if status == "Withdrawn" { return .invalid("You are already Withdrawn from study") }
            try await connection.query(
                """
                UPDATE participant_studies SET status = 'Withdrawn', updated_at = now(), withdrawn_at = now(),
                    participant_id = CASE WHEN \(deleteData) THEN NULL ELSE participant_id END,
                    participant_id_sealed = CASE WHEN \(deleteData) THEN NULL ELSE participant_id_sealed END
                WHERE user_id = \(userId) AND study_id = \(studyId)
                """, logger: logger)
            if deleteData {
                try await connection.query(
                    "DELETE FROM participant_activities WHERE user_id = \(userId) AND study_id = \(studyId)", logger: logger)
            }
            try await audit.record(
                actor: userId.uuidString.lowercased(), action: "participant.withdrew", studyId: studyId,
                details: ["from": status, "deleteData": String(deleteData)], on: connection)
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Closes the account: the listed studies are withdrawn for the record, then the participant,
    /// their sessions, states and password history are deleted, with any e-mail still queued for
    /// them. The audit trail keeps the pseudonymous user id only.
    package func deleteAccount(userId: UUID, withdrawing studyIds: [String], action: String) async throws {
        try await client.withTransaction(logger: logger) { connection in
            for studyId in studyIds {
                try await audit.record(
                    actor: userId.uuidString.lowercased(), action: "participant.withdrew", studyId: studyId,
                    details: ["deleteData": "true", "with": action], on: connection)
            }
            try await connection.query(
                """
                DELETE FROM mail_outbox m USING participants p
                WHERE p.user_id = \(userId) AND m.app_id = p.app_id AND lower(m.recipient) = p.email_key
                """, logger: logger)
            try await connection.query("DELETE FROM participants WHERE user_id = \(userId)", logger: logger)
            try await audit.record(actor: userId.uuidString.lowercased(), action: "participant.\(action)", on: connection)
        }
    }
}

/// Many single-item activity updates in one statement (`StudyStateStore.activityWrites`), each
/// with the same rule as `UpsertActivityStatement`: the values it leaves out keep what is
/// stored, and a stale one (`StudyStates.isFresher`) changes nothing. The updates travel as one
/// JSON array, so a value left out arrives as NULL; their times as a typed array beside it.
package struct MergeActivityStatesStatement: PostgresPreparedStatement {
    package static let sql = """
        MERGE INTO participant_activities AS stored
        USING (
            SELECT x.*, x.run_number::bigint AS run, t.updated_at FROM jsonb_to_recordset($1::jsonb) AS x(
                user_id uuid, study_id text, activity_id text, activity_version text, activity_state text, activity_run_id text,
                bookmarked boolean, runs_total int, runs_completed int, runs_missed int, activity_start_date text,
                activity_end_date text, anchor_date_version text, anchor_date_created_date text, custom_schedule_runs text,
                run_number text, rank int, n bigint)
            JOIN unnest($2::timestamptz[]) WITH ORDINALITY AS t(updated_at, n) USING (n)
        ) AS x
        ON stored.user_id = x.user_id AND stored.study_id = x.study_id AND stored.activity_id = x.activity_id
        WHEN MATCHED AND (x.run IS NULL
            OR stored.activity_run_id !~ '^[0-9]{1,18}$'
            OR x.run > (CASE WHEN stored.activity_run_id ~ '^[0-9]{1,18}$' THEN stored.activity_run_id::bigint END)
            OR (x.run = (CASE WHEN stored.activity_run_id ~ '^[0-9]{1,18}$' THEN stored.activity_run_id::bigint END)
                AND (x.rank IS NULL OR x.rank >= CASE stored.activity_state
                    WHEN 'yetToJoin' THEN 0 WHEN 'inProgress' THEN 1 ELSE 2 END))) THEN
            UPDATE SET
                activity_version = coalesce(x.activity_version, stored.activity_version),
                activity_state = coalesce(x.activity_state, stored.activity_state),
                activity_run_id = coalesce(x.activity_run_id, stored.activity_run_id),
                bookmarked = coalesce(x.bookmarked, stored.bookmarked),
                runs_total = coalesce(x.runs_total, stored.runs_total),
                runs_completed = coalesce(x.runs_completed, stored.runs_completed),
                runs_missed = coalesce(x.runs_missed, stored.runs_missed),
                activity_start_date = coalesce(x.activity_start_date, stored.activity_start_date),
                activity_end_date = coalesce(x.activity_end_date, stored.activity_end_date),
                anchor_date_version = coalesce(x.anchor_date_version, stored.anchor_date_version),
                anchor_date_created_date = coalesce(x.anchor_date_created_date, stored.anchor_date_created_date),
                custom_schedule_runs = coalesce(x.custom_schedule_runs::jsonb, stored.custom_schedule_runs),
                updated_at = x.updated_at
        WHEN NOT MATCHED THEN
            INSERT (user_id, study_id, activity_id, activity_version, activity_state, activity_run_id, bookmarked, runs_total,
                runs_completed, runs_missed, activity_start_date, activity_end_date, anchor_date_version,
                anchor_date_created_date, custom_schedule_runs, updated_at)
            VALUES (x.user_id, x.study_id, x.activity_id, coalesce(x.activity_version, ''), coalesce(x.activity_state, 'yetToJoin'),
                coalesce(x.activity_run_id, ''), coalesce(x.bookmarked, false), coalesce(x.runs_total, 0),
                coalesce(x.runs_completed, 0), coalesce(x.runs_missed, 0), coalesce(x.activity_start_date, ''),
                coalesce(x.activity_end_date, ''), coalesce(x.anchor_date_version, ''), coalesce(x.anchor_date_created_date, ''),
                coalesce(x.custom_schedule_runs::jsonb, '[]'), x.updated_at)
        """
    package static let bindingDataTypes: [PostgresDataType] = [.text, .timestamptzArray]
    package typealias Row = Void

    package var items: [UpsertActivityStatement]

    package init(items: [UpsertActivityStatement]) {
        self.items = items
    }

    /// `items` in rounds that each hold a participant's activity at most once: an activity's
    /// second update goes in the second round, and so on, so each keeps its place after the ones
    /// before it.
    package static func rounds(of items: [UpsertActivityStatement]) -> [[UpsertActivityStatement]] {
        struct Key: Hashable {
            var userId: UUID
            var studyId: String
            var activityId: String
        }
        var rounds: [[UpsertActivityStatement]] = []
        var seen: [Key: Int] = [:]
        for item in items {
            let key = Key(userId: item.userId, studyId: item.update.studyId, activityId: item.update.activityId)
            let round = seen[key].map { $0 + 1 } ?? 0
            seen[key] = round
            if round == rounds.count { rounds.append([]) }
            rounds[round].append(item)
        }
        return rounds
    }

    package func makeBindings() throws -> PostgresBindings {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func number<T: BinaryInteger>(_ value: T?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
        let rows = items.enumerated().map { index, item -> JSONValue in
            let update = item.update
            return .object([
                "user_id": .string(item.userId.uuidString), "study_id": .string(update.studyId),
                "activity_id": .string(update.activityId), "activity_version": text(update.activityVersion),
                "activity_state": text(update.activityState), "activity_run_id": text(update.activityRunId),
                "bookmarked": update.bookmarked.map(JSONValue.bool) ?? .null,
                "runs_total": number(update.run.map { Int32(clamping: $0.total) }),
                "runs_completed": number(update.run.map { Int32(clamping: $0.completed) }),
                "runs_missed": number(update.run.map { Int32(clamping: $0.missed) }),
                "activity_start_date": text(update.activityStartDate), "activity_end_date": text(update.activityEndDate),
                "anchor_date_version": text(update.anchorDateVersion),
                "anchor_date_created_date": text(update.anchorDatecreatedDate), "custom_schedule_runs": text(item.runs),
                // As text: a run number may have 18 digits, more than a JSON number keeps exactly.
                "run_number": text(StudyStates.runNumber(update.activityRunId).map(String.init)),
                "rank": number(update.activityState.map(StudyStates.rank)), "n": .number(Double(index + 1)),
            ])
        }
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(JSONValue.array(rows).serialized(sortedKeys: false))
        bindings.append(items.map(\.now))
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws {}
}
