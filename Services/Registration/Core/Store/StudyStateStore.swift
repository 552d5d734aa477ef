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
        // MERGE changes a row once per statement, so a batch is applied in rounds, each holding
        // an activity at most once, in the order the calls came. A round PostgreSQL refuses (an
        // activity inserted by another batch at the same moment: MERGE takes no ON CONFLICT) is
        // applied item by item, in order, with the single upsert, which settles such races itself.
        // One batch in flight: two would lock the rows they share in whatever order each plan
        // visits them, and deadlocked under load (each waiting out PostgreSQL's 1 s detector).
        activityWrites = GroupCommit(
            maxBatch: 256, maxInFlight: 1, splitsOn: { ($0 as? PSQLError)?.serverInfo?[.sqlState] != nil }, logger: logger
        ) { items in
            for round in MergeActivityStatesStatement.rounds(of: items) {
                if round.count == 1 {
                    for try await _ in try await client.run(round[0], pooling: pooling, logger: logger) {}
                } else {
                    for try await _ in try await client.run(MergeActivityStatesStatement(items: round), pooling: pooling, logger: logger) {}
                }
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
                enrolledDate: enrolled.map { AppDates.text($0, in: .gmt) } ?? "", completion: completion, adherence: adherence))
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

    /// A custom schedule's runs as stored (JSON); most activities have none (`[]`), read without a
    /// decoder.
    static func customRuns(_ text: String) -> [ActivityStateReply.CustomRun] {
        guard text != "[]" else { return [] }
        return (try? JSONDecoder().decode([ActivityStateReply.CustomRun].self, from: Data(text.utf8))) ?? []
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
                anchorDatecreatedDate: try column(8, String.self), lastModifiedDate: AppDates.text(try column(9, Date.self), in: .gmt),
                customScheduleRuns: Self.customRuns(try column(10, String.self)),
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
