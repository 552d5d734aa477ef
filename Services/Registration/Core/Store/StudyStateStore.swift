import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels

/// A participant's state in each study (participation, bookmark, progress) and in each activity.
package struct StudyStateStore: Sendable {
    package let client: PostgresClient
    /// Whether a pooler in transaction mode stands between: no named prepared statements then.
    package let pooling: DatabaseSettings.Pooling
    /// Seals each study's `participantId` (the response service's app token).
    package let seal: RowSeal
    package let audit: AuditLog
    package let logger: Logger
    /// `updateActivityState` is the apps' most frequent write: single-item updates that arrive
    /// while one is in flight are applied together, in one statement and one commit.
    private let activityWrites: GroupCommit<UpsertActivityStatement, Void>

    package init(client: PostgresClient, seal: RowSeal, audit: AuditLog, pooling: DatabaseSettings.Pooling = .session, logger: Logger) {
        self.client = client
        self.pooling = pooling
        self.seal = seal
        self.audit = audit
        self.logger = logger
        // A batch that PostgreSQL refuses (two updates of one new activity in one batch, or one
        // inserted by another batch at the same moment: MERGE takes no ON CONFLICT) is applied
        // item by item, in order, with the single upsert, which settles such races itself.
        activityWrites = GroupCommit(
            maxBatch: 256, maxInFlight: 2, splitsOn: { ($0 as? PSQLError)?.serverInfo?[.sqlState] != nil }, logger: logger
        ) { items in
            if items.count == 1 {
                for try await _ in try await client.run(items[0], pooling: pooling, logger: logger) {}
            } else {
                for try await _ in try await client.run(MergeActivityStatesStatement(items: items), pooling: pooling, logger: logger) {}
            }
            return items.map { _ in .success(()) }
        }
    }

    package func studies(userId: UUID) async throws -> [StudyStateReply.Study] {
        let rows = try await client.query(
            """
            SELECT study_id, status, bookmarked, participant_id_sealed, coalesce(participant_id, ''), enrolled_at,
                   completion, adherence
            FROM participant_studies WHERE user_id = \(userId) ORDER BY study_id
            """, logger: logger)
        var studies: [StudyStateReply.Study] = []
        for try await (studyId, status, bookmarked, sealed, legacy, enrolled, completion, adherence) in rows.decode(
            (String, String, Bool, ByteBuffer?, String, Date?, Int, Int).self)
        {
            let participantId = sealed.flatMap { seal.open(Array($0.readableBytesView), row: userId, studyId: studyId) } ?? legacy
            studies.append(.init(
                studyId: studyId, status: status, bookmarked: bookmarked, participantId: participantId,
                enrolledDate: enrolled.map(WireTime.format) ?? "", completion: completion, adherence: adherence))
        }
        return studies
    }

    /// Seals the participant ids that earlier versions kept in clear, and erases the clear copies;
    /// run at start, after the migrations. Returns how many it sealed.
    @discardableResult
    package func sealLegacy() async throws -> Int {
        var sealed = 0
        while true {
            let batch = try await client.withTransaction(logger: logger) { connection -> Int in
                let rows = try await connection.query(
                    """
                    SELECT user_id, study_id, participant_id FROM participant_studies
                    WHERE participant_id IS NOT NULL LIMIT 500 FOR UPDATE SKIP LOCKED
                    """, logger: logger)
                var found: [(UUID, String, String)] = []
                for try await row in rows.decode((UUID, String, String).self) { found.append(row) }
                for (userId, studyId, participantId) in found {
                    let box = ByteBuffer(bytes: try seal.seal(participantId, row: userId, studyId: studyId))
                    try await connection.query(
                        """
                        UPDATE participant_studies SET participant_id_sealed = \(box), participant_id = NULL
                        WHERE user_id = \(userId) AND study_id = \(studyId)
                        """, logger: logger)
                }
                return found.count
            }
            sealed += batch
            if batch == 0 { return sealed }
        }
    }

    /// Applies every item in one transaction. Becoming `inProgress` from another status stamps the
    /// enrollment date and clears that study's activity states (a new participation); a replay of
    /// the same status changes nothing.
    package func update(_ updates: [StudyStates.StudyUpdate], userId: UUID, now: Date = Date()) async throws {
        try await client.withTransaction(logger: logger) { connection in
            for update in updates {
                // The upsert locks the row for the rest of the transaction and tells the status before.
                let rows = try await connection.query(
                    """
                    INSERT INTO participant_studies AS p (user_id, study_id) VALUES (\(userId), \(update.studyId))
                    ON CONFLICT (user_id, study_id) DO UPDATE SET updated_at = p.updated_at
                    RETURNING p.status
                    """, logger: logger)
                var previous = "yetToJoin"
                for try await status in rows.decode(String.self) { previous = status }
                let enrolls = update.status == "inProgress" && previous != "inProgress"
                try await connection.query(
                    """
                    UPDATE participant_studies SET
                        status = coalesce(\(update.status), status),
                        participant_id_sealed = coalesce(\(try update.participantId.map {
                            ByteBuffer(bytes: try seal.seal($0, row: userId, studyId: update.studyId)) }), participant_id_sealed),
                        participant_id = CASE WHEN \(update.participantId != nil) THEN NULL ELSE participant_id END,
                        participant_token_hash = coalesce(\(update.participantId.map(InvitationStore.participantTokenHash)),
                            participant_token_hash),
                        bookmarked = coalesce(\(update.bookmarked), bookmarked),
                        completion = coalesce(\(update.completion), completion),
                        adherence = coalesce(\(update.adherence), adherence),
                        enrolled_at = CASE WHEN \(enrolls) THEN \(now) ELSE enrolled_at END,
                        withdrawn_at = CASE WHEN \(update.status)::text = 'Withdrawn' AND status <> 'Withdrawn' THEN \(now)
                            WHEN \(update.status)::text <> 'Withdrawn' THEN NULL ELSE withdrawn_at END,
                        updated_at = \(now)
                    WHERE user_id = \(userId) AND study_id = \(update.studyId)
                    """, logger: logger)
                if enrolls {
                    try await connection.query(
                        "DELETE FROM participant_activities WHERE user_id = \(userId) AND study_id = \(update.studyId)",
                        logger: logger)
                }
                if let participantId = update.participantId {
                    try await InvitationStore.link(
                        userId: userId, studyId: update.studyId,
                        participantTokenHash: InvitationStore.participantTokenHash(participantId), on: connection, logger: logger)
                }
                if let status = update.status, status != previous {
                    try await audit.record(
                        actor: userId.uuidString.lowercased(), action: "participant.study_status", studyId: update.studyId,
                        details: ["from": previous, "to": status], on: connection)
                }
            }
        }
    }

    package func activities(userId: UUID, studyId: String) async throws -> [ActivityStateReply.Activity] {
        let rows = try await client.query(
            """
            SELECT activity_id, activity_version, activity_state, activity_run_id, bookmarked, activity_start_date,
                activity_end_date, anchor_date_version, anchor_date_created_date, updated_at, custom_schedule_runs::text,
                runs_total, runs_completed, runs_missed
            FROM participant_activities WHERE user_id = \(userId) AND study_id = \(studyId) ORDER BY activity_id
            """, logger: logger)
        var activities: [ActivityStateReply.Activity] = []
        for try await row in rows {
            let c = row.makeRandomAccess()
            func column<T: PostgresDecodable>(_ index: Int, _ type: T.Type) throws -> T {
                try c[index].decode(T.self, context: .default)
            }
            activities.append(.init(
                activityId: try column(0, String.self), activityVersion: try column(1, String.self),
                activityState: try column(2, String.self), activityRunId: try column(3, String.self),
                bookmarked: try column(4, Bool.self), activityStartDate: try column(5, String.self),
                activityEndDate: try column(6, String.self), anchorDateVersion: try column(7, String.self),
                anchorDatecreatedDate: try column(8, String.self), lastModifiedDate: WireTime.format(try column(9, Date.self)),
                customScheduleRuns: (try? JSONDecoder().decode(
                    [ActivityStateReply.CustomRun].self, from: Data(try column(10, String.self).utf8))) ?? [],
                activityRun: .init(
                    total: try column(11, Int.self), completed: try column(12, Int.self), missed: try column(13, Int.self))))
        }
        return activities
    }

    /// Upserts each item; a stale replay (an earlier run, or a step back within a run,
    /// `StudyStates.isFresher`) leaves the stored row as it is, checked in the statement itself.
    /// The usual single-item call joins the calls in flight (`activityWrites`: one statement and
    /// one commit for all of them); several items of one call are applied in one transaction.
    package func update(_ updates: [StudyStates.ActivityUpdate], userId: UUID, now: Date = Date()) async throws {
        let statements = try updates.map { try UpsertActivityStatement(update: $0, userId: userId, now: now) }
        if statements.count == 1 {
            try await activityWrites.submit(statements[0])
            return
        }
        try await client.withTransaction(logger: logger) { connection in
            for statement in statements {
                for try await _ in try await connection.run(statement, pooling: pooling, logger: logger) {}
            }
        }
    }
}

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

/// `yyyy-MM-dd'T'HH:mm:ss.SSSZ` in UTC, the registration server's date format.
package enum WireTime {
    package static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
        return formatter.string(from: date)
    }
}

extension StudyStateStore {
    package enum WithdrawOutcome: Sendable {
        case withdrawn
        case alreadyWithdrawn
        case notJoined
    }

    /// Leaves a study: status `Withdrawn`; with `deleteData`, the activity states and the link to the
    /// response service's participant go too.
    package func withdraw(userId: UUID, studyId: String, deleteData: Bool) async throws -> WithdrawOutcome {
        try await client.withTransaction(logger: logger) { connection -> WithdrawOutcome in
            let rows = try await connection.query(
                "SELECT status FROM participant_studies WHERE user_id = \(userId) AND study_id = \(studyId) FOR UPDATE",
                logger: logger)
            var status: String?
            for try await value in rows.decode(String.self) { status = value }
            guard let status else { return .notJoined }
            if status == "Withdrawn" { return .alreadyWithdrawn }
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
            return .withdrawn
        }
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
