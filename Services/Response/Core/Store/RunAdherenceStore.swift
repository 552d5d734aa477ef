import Foundation
import Logging
import PostgresNIO
import StudyModels

/// Each study's `RunAdherence` table: per participant, activity and week (Monday, on the
/// participant's clock), the runs that opened and what became of them, as registration counted
/// them from the schedule and the data that arrived (docs/schedules.md, Adherence for
/// researchers). It is one of the study's tables like any other: the LabKey API queries it, the
/// exports carry it, and a participant reads their own rows.
package struct RunAdherenceStore: Sendable {
    package let client: PostgresClient
    package let tables: StudyTables
    package let logger: Logger

    package init(client: PostgresClient, tables: StudyTables, logger: Logger) {
        self.client = client
        self.tables = tables
        self.logger = logger
    }

    /// The table's design: counts as double precision, as every number of the response tables.
    package static let schema = SurveySchema(
        activityId: ResponseLists.runAdherence, version: "",
        lists: [
            .init(
                name: ResponseLists.runAdherence, parent: nil,
                columns: [
                    .init(name: "ActivityId", storage: .varchar(100)), .init(name: "Week", storage: .timestamp),
                    .init(name: "RunsOpened", storage: .double), .init(name: "RunsCompleted", storage: .double),
                    .init(name: "RunsMissed", storage: .double), .init(name: "RunsExpired", storage: .double),
                    .init(name: "CountedAt", storage: .timestamp), .init(name: "RunsNotStored", storage: .double),
                ])
        ])

    /// Writes a participant's weeks unless what is kept was counted later; a week counted as
    /// nothing goes. Nothing for a participant the study does not have (or whose data was deleted
    /// when they withdrew). Returns how many weeks were written or removed.
    package func record(_ update: RunAdherenceUpdate, studyId: String) async throws -> Int {
        var found: (number: Int64, studyKey: String)?
        for try await row in try await client.query(
            """
            SELECT p.number, p.study_key FROM participants p JOIN studies s ON s.study_key = p.study_key
            WHERE s.study_id = \(studyId) AND p.enrolled_token_sha256 = \(update.participantTokenSHA256)
            """, logger: logger
        ).decode((Int64, String).self) { found = (row.0, row.1) }
        guard let found, !update.weeks.isEmpty else { return 0 }
        let table = try await ensureTable(studyKey: found.studyKey)
        let kept = update.weeks.filter { $0.opened + $0.completed + $0.missed + $0.expired + $0.notStored > 0 }
        let gone = update.weeks.filter { $0.opened + $0.completed + $0.missed + $0.expired + $0.notStored == 0 }
        var binds = PostgresBindings()
        binds.append(found.number)
        binds.append(kept.map(\.activityId))
        binds.append(kept.map(\.week))
        binds.append(kept.map { Double($0.opened) })
        binds.append(kept.map { Double($0.completed) })
        binds.append(kept.map { Double($0.missed) })
        binds.append(kept.map { Double($0.expired) })
        binds.append(update.countedAt)
        binds.append(gone.map(\.activityId))
        binds.append(gone.map(\.week))
        binds.append(kept.map { Double($0.notStored) })
        var changed = 0
        for try await count in try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH written AS (
                        INSERT INTO \(table) ("ParticipantId", "ActivityId", "Week", "RunsOpened", "RunsCompleted", "RunsMissed",
                                              "RunsExpired", "RunsNotStored", "CountedAt")
                        SELECT $1, a, (w || 'T00:00:00Z')::timestamptz, o, c, m, e, n, $8
                        FROM unnest($2::text[], $3::text[], $4::float8[], $5::float8[], $6::float8[], $7::float8[], $11::float8[])
                            AS t(a, w, o, c, m, e, n)
                        ON CONFLICT ("ParticipantId", "ActivityId", "Week") DO UPDATE SET "RunsOpened" = excluded."RunsOpened",
                            "RunsCompleted" = excluded."RunsCompleted", "RunsMissed" = excluded."RunsMissed",
                            "RunsExpired" = excluded."RunsExpired", "RunsNotStored" = excluded."RunsNotStored",
                            "CountedAt" = excluded."CountedAt"
                        WHERE \(table)."CountedAt" <= excluded."CountedAt"
                        RETURNING 1
                    ), removed AS (
                        DELETE FROM \(table) r USING unnest($9::text[], $10::text[]) AS g(a, w)
                        WHERE r."ParticipantId" = $1 AND r."ActivityId" = g.a AND r."Week" = (g.w || 'T00:00:00Z')::timestamptz
                          AND r."CountedAt" <= $8
                        RETURNING 1
                    )
                    SELECT (SELECT count(*) FROM written)::int + (SELECT count(*) FROM removed)::int
                    """, binds: binds), logger: logger
        ).decode(Int.self) { changed = count }
        return changed
    }

    /// The study's table, made the first time with a row per participant, activity and week (a
    /// table made before runs not stored were counted gets their column).
    private func ensureTable(studyKey: String) async throws -> String {
        if let (table, current) = try await table(studyKey: studyKey), current { return table }
        try await tables.apply(Self.schema, studyKey: studyKey)
        guard let (table, _) = try await table(studyKey: studyKey) else {
            throw SurveySchema.DesignError(description: "the \(ResponseLists.runAdherence) table of study \(studyKey) was not made")
        }
        try await client.query(
            PostgresQuery(unsafeSQL: "CREATE UNIQUE INDEX IF NOT EXISTS run_adherence_row ON \(table) (\"ParticipantId\", \"ActivityId\", \"Week\")"),
            logger: logger)
        return table
    }

    /// The table, and whether it has every column of `schema`.
    private func table(studyKey: String) async throws -> (String, Bool)? {
        for try await (schema, table, columns) in try await client.query(
            """
            SELECT s.schema_name, l.sql_name, (SELECT count(*)::int FROM response_columns c WHERE c.list_id = l.id AND NOT c.system)
            FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
            WHERE l.study_key = \(studyKey) AND l.name = \(ResponseLists.runAdherence)
            """, logger: logger
        ).decode((String, String, Int).self) {
            return ("\(SQLName.quoted(schema)).\(SQLName.quoted(table))", columns >= Self.schema.lists[0].columns.count)
        }
        return nil
    }
}
