import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// The real `response` executable, killed with SIGKILL while its worker is storing a backlog of
/// responses, then started again: nothing is half-stored at the kill (each table holds exactly
/// the rows of the responses marked processed) and nothing is lost (all are processed once, after
/// the restart).
@Suite(.needsCluster) struct ResponseWorkerKillTests {
    static let study = ProcessingFixture.study
    static let backlog = 400

    func environment(_ url: String) async throws -> [String: String] {
        [
            "DATABASE_URL": url,
            "DATABASE_MAX_CONNECTIONS": "4",
            "INTERNAL_SIGNING_KEY": TestConfiguration.keys[.response]!,
            "INTERNAL_CALLER_KEYS": TestConfiguration.callerKeys(for: .response),
            "STUDYSTACK_ENCRYPTION_KEY": TestConfiguration.encryptionKey,
            "STUDY_METADATA_URL": TestConfiguration.unreachablePeer,
            "REGISTRATION_URL": TestConfiguration.unreachablePeer,
            "QUERY_DATABASE_URL": try await ResponseHarness.readerURL(url),
            "LOG_LEVEL": "warning",
        ]
    }

    /// Row counts of every table of the study, the timing rows, and the processed responses, all
    /// read in one snapshot: the worker commits between statements, and counts taken at different
    /// moments would disagree without anything being wrong.
    func counts(_ postgres: PostgresClient) async throws -> (tables: [String: Int], timings: Int, processed: Int, other: Int) {
        let logger = Logger(label: "test")
        return try await postgres.withConnection { connection in
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            var tables: [String: Int] = [:]
            var names: [String] = []
            for try await name in try await connection.query(
                "SELECT sql_name FROM response_lists WHERE study_key = \(Self.study)", logger: logger
            ).decode(String.self) { names.append(name) }
            let schema = SQLName.quoted(SQLName.schema(forStudy: Self.study))
            for name in names {
                for try await count in try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(schema).\(SQLName.quoted(name))"), logger: logger
                ).decode(Int.self) { tables[name] = count }
            }
            var result = (tables: tables, timings: 0, processed: 0, other: 0)
            for try await (timings, processed, other) in try await connection.query(
                """
                SELECT (SELECT count(*)::int FROM response_metadata),
                       (SELECT count(*)::int FROM responses WHERE status = 'processed'),
                       (SELECT count(*)::int FROM responses WHERE status NOT IN ('processed', 'pending'))
                """, logger: logger
            ).decode((Int, Int, Int).self) { (result.timings, result.processed, result.other) = (timings, processed, other) }
            try await connection.query("COMMIT", logger: logger)
            return result
        }
    }

    @Test func aWorkerKilledMidBatchLeavesNothingHalfStoredAndNothingLost() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let first = try await ServiceProcess.start("response", environment: try await environment(url))
            try await TestDatabase.withClient(url: url) { postgres, logger in
                // A backlog as offline phones would leave it: one participant, many pending
                // responses of one design, written at once.
                let design = try String(contentsOf: ProcessingFixture.file("NewSurvey", "1"), encoding: .utf8)
                let data = try String(contentsOf: ProcessingFixture.file("NewSurvey", "1", response: true), encoding: .utf8)
                try await postgres.query(
                    """
                    INSERT INTO studies (study_key, study_id, app_id, org_id, status, version, event_at, event)
                    VALUES (\(Self.study), \(Self.study), 'DEMOAPP', 'DEMOORG', 'active', 1, now(), '{}')
                    """, logger: logger)
                try await postgres.query(
                    """
                    INSERT INTO participants (study_key, app_token_hash, status, allow_data_sharing)
                    VALUES (\(Self.study), 'kill-test', 'enrolled', 'true')
                    """, logger: logger)
                try await postgres.query(
                    """
                    INSERT INTO activity_designs (study_key, activity_id, version, design)
                    VALUES (\(Self.study), 'NewSurvey', '1', \(design)::jsonb)
                    """, logger: logger)
                try await postgres.query(
                    """
                    INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint)
                    SELECT p.id, \(Self.study), 'NewSurvey', '1', '{}', \(data)::jsonb, 'kill-' || n
                    FROM participants p, generate_series(1, \(Self.backlog)) n
                    """, logger: logger)

                // Kill it while it is part-way through.
                try await eventually("30 responses processed", within: .seconds(60), poll: .milliseconds(20)) {
                    try await counts(postgres).processed
                } until: { $0 >= 30 }
                await first.kill()
                let atKill = try await counts(postgres)
                #expect(atKill.processed > 0 && atKill.processed < Self.backlog, "killed at \(atKill.processed)")
                #expect(atKill.other == 0)

                // Started again, it finishes the backlog.
                let second = try await ServiceProcess.start("response", environment: try await environment(url))
                defer { second.stop() }
                let final = try await eventually("the whole backlog processed", within: .seconds(240), poll: .milliseconds(200)) {
                    try await counts(postgres)
                } until: { $0.processed == Self.backlog }
                #expect(final.processed == Self.backlog)
                #expect(final.other == 0)

                // Each response stored the same rows; at the kill every table held exactly the
                // rows of the responses already marked processed: none half-stored, none twice.
                #expect(final.timings % Self.backlog == 0)
                #expect(atKill.timings == final.timings / Self.backlog * atKill.processed)
                for (table, total) in final.tables {
                    #expect(total % Self.backlog == 0, "\(table)")
                    #expect(atKill.tables[table, default: 0] == total / Self.backlog * atKill.processed, "\(table)")
                }
                #expect(final.tables["NewSurvey"] == Self.backlog)
            }
        }
    }
}
