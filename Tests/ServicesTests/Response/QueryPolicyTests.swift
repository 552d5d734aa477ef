import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import JSONText
import StudyModels
import Testing
import TestSupport

/// The researchers' row-level security policy as PostgreSQL plans it, and how a start brings a
/// table's earlier policy up to the current one.
@Suite(.needsCluster) struct QueryPolicyTests {
    let fixture = QueryFixture()
    let logger = Logger(label: "query-policy-test")
    let table = "\(SQLName.quoted(SQLName.schema(forStudy: QueryFixture.study))).\"NewSurvey\""

    /// Runs `sql` as the reader role, or as `role` (one the reader may switch to), under `scope`
    /// and the transaction's `settings`, and returns its first column's text values.
    func read(
        _ sql: String, scope: String, as role: String? = nil, settings: [String: String] = [:], readerURL: String
    ) async throws -> [String] {
        try await TestDatabase.withClient(url: readerURL) { reader, logger in
            try await reader.withConnection { connection in
                try await connection.query("BEGIN READ ONLY", logger: logger)
                try await connection.query("SELECT set_config('studystack.query_scope', \(scope), true)", logger: logger)
                if let role { try await connection.query("SELECT set_config('role', \(role), true)", logger: logger) }
                for (name, value) in settings {
                    try await connection.query("SELECT set_config(\(name), \(value), true)", logger: logger)
                }
                var values: [String] = []
                for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    .decode(String.self)
                { values.append(value) }
                try await connection.query("COMMIT", logger: logger)
                return values
            }
        }
    }

    /// The policies on the fixture's `NewSurvey` table: `name roles`, by name.
    func policies(_ h: ResponseHarness) async throws -> [String] {
        var names: [String] = []
        for try await name in try await h.postgres.query(
            """
            SELECT policyname || ' ' || roles::text FROM pg_policies
            WHERE schemaname = \(SQLName.schema(forStudy: QueryFixture.study)) AND tablename = 'NewSurvey'
            ORDER BY policyname
            """, logger: logger
        ).decode(String.self) { names.append(name) }
        return names
    }

    @Test func aStudyScopeIsPlannedAsTheWholeTableAndAParticipantsAsTheirRows() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            // 1,000 more rows of A's, so that half a percent of the table and all of it differ.
            try await h.postgres.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO \(table) ("ParticipantId") SELECT \(p.aId) FROM generate_series(1, 1000)
                        """), logger: logger)
            try await h.postgres.query(PostgresQuery(unsafeSQL: "ANALYZE \(table)"), logger: logger)
            let readerURL = try await ResponseHarness.readerURL(h.databaseURL)
            let researcher = TestDatabase.queryResearcherRole
            let studyScope = h.access.scope(studyKey: QueryFixture.study)
            #expect(
                try await read("SELECT count(*)::text FROM \(table)", scope: studyScope, as: researcher, readerURL: readerURL)
                    == ["1002"])

            let plan = try #require(
                try await read(
                    "EXPLAIN (FORMAT JSON) SELECT \"ParticipantId\" FROM \(table)", scope: studyScope, as: researcher,
                    readerURL: readerURL
                ).first)
            let estimate = try #require(JSONValue.parse(Array(plan.utf8), budget: .studyDocument).array?.first?["Plan"]?["Plan Rows"]?.number)
            // The policy as first written (`(SELECT query_scope_study()) = '<key>'`) was estimated
            // at half a percent of the table, plus the participants' policy's guess of one
            // participant's share: 504 rows here, with two participants (on a study's table of
            // 100,000 rows in 7,000 participants, 500).
            #expect(estimate >= 900, "\(plan)")

            // The scope still decides: another study's scope reads none of those rows.
            let other = h.access.scope(studyKey: "OTHERSTUDY")
            #expect(try await read("SELECT count(*)::text FROM \(table)", scope: other, as: researcher, readerURL: readerURL) == ["0"])

            // A participant's query has their policy alone, so it can use the ParticipantId index
            // (with both policies joined by OR it could only read the whole table). Sequential
            // scans are priced out to ask whether the index is usable at all.
            let b = h.access.scope(participantId: p.bId)
            #expect(try await read("SELECT count(*)::text FROM \(table)", scope: b, readerURL: readerURL) == ["1"])
            let participantPlan = try await read(
                "EXPLAIN SELECT * FROM \(table)", scope: b, settings: ["enable_seqscan": "off"], readerURL: readerURL
            ).joined(separator: "\n")
            #expect(participantPlan.contains("NewSurvey_ParticipantId_idx"), "\(participantPlan)")
            #expect(!participantPlan.contains("query_scope_study"), "\(participantPlan)")
        }
    }

    @Test func aStartReplacesAnEarlierStudyPolicyWithTheCurrentOne() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            let current = [
                "\(QueryAccess.participantPolicyName) {\(TestDatabase.queryReaderRole)}",
                "\(QueryAccess.studyPolicyName) {\(TestDatabase.queryResearcherRole)}",
            ]
            #expect(try await policies(h) == current)
            // The table as an earlier version left it: both policies for every role, each under
            // its first name and shape (the participant's compared the service's own key).
            for statement in [
                "DROP POLICY \(QueryAccess.studyPolicyName) ON \(table)",
                "DROP POLICY \(QueryAccess.participantPolicyName) ON \(table)",
                """
                CREATE POLICY participant_rows ON \(table) FOR SELECT
                USING ("ParticipantId" = (SELECT public.query_scope_participant()))
                """,
                """
                CREATE POLICY study_rows ON \(table) FOR SELECT
                USING ((SELECT public.query_scope_study()) = '\(QueryFixture.study)')
                """,
            ] {
                try await h.postgres.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            #expect(try await policies(h) == ["participant_rows {public}", "study_rows {public}"])

            try await h.access.prepare(client: h.postgres, logger: logger)
            #expect(try await policies(h) == current)
            // A second start finds nothing to change.
            try await h.access.prepare(client: h.postgres, logger: logger)
            #expect(try await policies(h) == current)

            let readerURL = try await ResponseHarness.readerURL(h.databaseURL)
            let owners = try await read(
                "SELECT \"ParticipantId\"::text FROM \(table) ORDER BY 1",
                scope: h.access.scope(studyKey: QueryFixture.study), as: TestDatabase.queryResearcherRole, readerURL: readerURL)
            #expect(owners == [String(p.aId), String(p.bId)].sorted())
        }
    }

    /// A reader without its researcher role stops the start with what to run, and changes nothing.
    @Test func aReaderWithoutItsResearcherRoleIsRefusedAtStart() async throws {
        try await ResponseHarness.run { h in
            _ = try await fixture.populate(h)
            let before = try await policies(h)
            let lonely = QueryAccess(
                readerRole: "studystack_no_such_reader", encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!)
            let error = await #expect(throws: QueryAccess.MissingResearcherRole.self) {
                try await lonely.prepare(client: h.postgres, logger: logger)
            }
            let message = error?.description ?? ""
            #expect(
                message.contains(
                    #"CREATE ROLE "studystack_no_such_reader_researcher" NOLOGIN; GRANT "studystack_no_such_reader_researcher" TO "studystack_no_such_reader";"#),
                "\(message)")
            // A login whose researcher role's name PostgreSQL would cut: refused for that.
            let long = QueryAccess(
                readerRole: String(repeating: "q", count: 53), encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!)
            let tooLong = await #expect(throws: QueryAccess.MissingResearcherRole.self) {
                try await long.prepare(client: h.postgres, logger: logger)
            }
            #expect(tooLong?.description.contains("Use a login of at most 52 bytes.") == true, "\(String(describing: tooLong))")
            #expect(try await policies(h) == before)
        }
    }

    /// What the sandbox sets up for each query: the role of its scope, and a plan for every row
    /// of its cursor (which it reads whole) rather than PostgreSQL's default first tenth.
    @Test func theSandboxRunsEachScopeAsItsRoleAndPlansForEveryRow() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            let readerURL = try await ResponseHarness.readerURL(h.databaseURL)
            let access = h.access
            let (participant, study) = try await TestDatabase.withClient(url: readerURL) { reader, logger in
                let sandbox = SandboxedQueries(
                    reader: reader, access: access,
                    limits: .init(timeout: .seconds(5), maxRows: 10, maxReplyBytes: 1 << 20, maxConcurrent: 2),
                    timeZone: TimeZone(identifier: "UTC")!, logger: logger)
                let translation = QueryTranslator.Translation(
                    sql: "SELECT pg_catalog.current_setting('cursor_tuple_fraction'), current_user::text",
                    columns: ["fraction", "role"])
                return (
                    try await sandbox.run(translation, scope: .participant(p.aId)).rows,
                    try await sandbox.run(translation, scope: .study(key: QueryFixture.study, caller: UUID())).rows
                )
            }
            #expect(participant == [[.string("1"), .string(TestDatabase.queryReaderRole)]])
            #expect(study == [[.string("1"), .string(TestDatabase.queryResearcherRole)]])
        }
    }
}
