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
@Suite struct QueryPolicyTests {
    let fixture = QueryFixture()
    let logger = Logger(label: "query-policy-test")
    let table = "\(SQLName.quoted(SQLName.schema(forStudy: QueryFixture.study))).\"NewSurvey\""

    /// Runs `sql` as the reader role under `scope` and returns its first column's text values.
    func read(_ sql: String, scope: String, readerURL: String) async throws -> [String] {
        try await TestDatabase.withClient(url: readerURL) { reader, logger in
            try await reader.withConnection { connection in
                try await connection.query("BEGIN READ ONLY", logger: logger)
                try await connection.query("SELECT set_config('studystack.query_scope', \(scope), true)", logger: logger)
                var values: [String] = []
                for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                    .decode(String.self)
                { values.append(value) }
                try await connection.query("COMMIT", logger: logger)
                return values
            }
        }
    }

    /// The policies on the fixture's `NewSurvey` table, by name.
    func policies(_ h: ResponseHarness) async throws -> [String] {
        var names: [String] = []
        for try await name in try await h.postgres.query(
            """
            SELECT policyname::text FROM pg_policies
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
            let studyScope = h.access.scope(studyKey: QueryFixture.study)
            #expect(try await read("SELECT count(*)::text FROM \(table)", scope: studyScope, readerURL: readerURL) == ["1002"])

            let plan = try #require(
                try await read("EXPLAIN (FORMAT JSON) SELECT \"ParticipantId\" FROM \(table)", scope: studyScope, readerURL: readerURL)
                    .first)
            let estimate = try #require(JSONValue.parse(Array(plan.utf8)).array?.first?["Plan"]?["Plan Rows"]?.number)
            // The policy as first written (`(SELECT query_scope_study()) = '<key>'`) was estimated
            // at half a percent of the table, plus the participants' policy's guess of one
            // participant's share: 504 rows here, with two participants (on a study's table of
            // 100,000 rows in 7,000 participants, 500).
            #expect(estimate >= 900, "\(plan)")

            // The scope still decides: another study's scope reads none of those rows.
            let other = h.access.scope(studyKey: "OTHERSTUDY")
            #expect(try await read("SELECT count(*)::text FROM \(table)", scope: other, readerURL: readerURL) == ["0"])
            let b = h.access.scope(participantId: p.bId)
            #expect(try await read("SELECT count(*)::text FROM \(table)", scope: b, readerURL: readerURL) == ["1"])
        }
    }

    @Test func aStartReplacesAnEarlierStudyPolicyWithTheCurrentOne() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            #expect(try await policies(h) == ["participant_rows", QueryAccess.studyPolicyName])
            // The table as an earlier version left it: its study policy under the first name.
            try await h.postgres.query(
                PostgresQuery(unsafeSQL: "DROP POLICY \(QueryAccess.studyPolicyName) ON \(table)"), logger: logger)
            try await h.postgres.query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE POLICY study_rows ON \(table) FOR SELECT
                        USING ((SELECT public.query_scope_study()) = '\(QueryFixture.study)')
                        """), logger: logger)
            #expect(try await policies(h) == ["participant_rows", "study_rows"])

            try await h.access.prepare(client: h.postgres, logger: logger)
            #expect(try await policies(h) == ["participant_rows", QueryAccess.studyPolicyName])
            // A second start finds nothing to change.
            try await h.access.prepare(client: h.postgres, logger: logger)
            #expect(try await policies(h) == ["participant_rows", QueryAccess.studyPolicyName])

            let readerURL = try await ResponseHarness.readerURL(h.databaseURL)
            let owners = try await read(
                "SELECT \"ParticipantId\"::text FROM \(table) ORDER BY 1",
                scope: h.access.scope(studyKey: QueryFixture.study), readerURL: readerURL)
            #expect(owners == [String(p.aId), String(p.bId)].sorted())
        }
    }
}
