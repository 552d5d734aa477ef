import Foundation
import HTTPTypes
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

/// A participant is an anonymous caller (enrollment in an open study needs no account), so what
/// one `executeSQL` may cost is bounded: the reply's size, the query's length and how many of a
/// participant's queries run at once.
@Suite(.needsCluster) struct ParticipantQueryLimitTests {
    let queries = QueryFixture()

    /// Doubles participant rows of `list` `times` times, straight in PostgreSQL (as the service's
    /// own role): many rows without many submissions.
    func multiply(_ h: ResponseHarness, list: String, times: Int) async throws {
        let logger = Logger(label: "test")
        var location: (String, String)?
        for try await row in try await h.postgres.query(
            """
            SELECT s.schema_name, l.sql_name FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
            WHERE l.study_key = \(QueryFixture.study) AND lower(l.name) = lower(\(list))
            """, logger: logger
        ).decode((String, String).self) { location = row }
        let (schema, table) = try #require(location)
        var columns: [String] = []
        for try await name in try await h.postgres.query(
            """
            SELECT column_name FROM information_schema.columns
            WHERE table_schema = \(schema) AND table_name = \(table) AND column_name <> 'Key'
            """, logger: logger
        ).decode(String.self) { columns.append("\"\(name)\"") }
        try #require(!columns.isEmpty)
        let list = columns.joined(separator: ", ")
        for _ in 0..<times {
            try await h.sql(PostgresQuery(unsafeSQL: "INSERT INTO \"\(schema)\".\"\(table)\" (\(list)) SELECT \(list) FROM \"\(schema)\".\"\(table)\""))
        }
    }

    @Test func aCrossJoinOfOnesOwnRowsStopsAtTheReplyCap() async throws {
        try await ResponseHarness.run(overrides: ["query.maxReplyBytes": "65536"]) { h in
            let p = try await queries.populate(h)
            try await multiply(h, list: "NewSurvey", times: 4)
            // Sixteen rows of A's: a 16-row query fits, the 4,096-row cross join of them does not.
            let (fits, small) = try await queries.executeSQL(h, p.a, "SELECT IntegerField, Created FROM NewSurvey")
            #expect(fits == .ok, "\(small)")
            #expect(small["rowCount"] == .number(16))
            let (status, body) = try await queries.executeSQL(
                h, p.a,
                "SELECT a.Created, b.Created, c.Created FROM NewSurvey a CROSS JOIN NewSurvey b CROSS JOIN NewSurvey c")
            #expect(status == .badRequest, "\(body["rowCount"] ?? .null)")
            #expect(body.exception?.contains("larger than 65536 bytes") == true, "\(body.exception ?? "")")
        }
    }

    /// A reply cut at the row limit says so, as LabKey does: `rowCount` is every row the query
    /// gives, the rows are the first `query.maxRows`. A query that asks for fewer is not cut.
    @Test func aReplyCutAtTheRowLimitSaysHowManyRowsThereWere() async throws {
        try await ResponseHarness.run(overrides: ["query.maxRows": "10"]) { h in
            let p = try await queries.populate(h)
            try await multiply(h, list: "NewSurvey", times: 4)
            let (status, cut) = try await queries.executeSQL(h, p.a, "SELECT IntegerField, Created FROM NewSurvey")
            #expect(status == .ok, "\(cut)")
            #expect(cut["rows"]?.array?.count == 10)
            #expect(cut["rowCount"] == .number(16), "the whole count, so the caller sees it was cut")
            let (limited, few) = try await queries.executeSQL(h, p.a, "SELECT IntegerField FROM NewSurvey LIMIT 5")
            #expect(limited == .ok)
            #expect(few["rows"]?.array?.count == 5)
            #expect(few["rowCount"] == .number(5))
            let (exact, ten) = try await queries.executeSQL(h, p.a, "SELECT IntegerField FROM NewSurvey LIMIT 10")
            #expect(exact == .ok)
            #expect(ten["rows"]?.array?.count == 10)
            #expect(ten["rowCount"] == .number(10), "asked for ten, nothing was cut")
        }
    }

    @Test func anOverlongQueryIsRefusedUnparsed() async throws {
        try await ResponseHarness.run { h in
            let p = try await queries.populate(h)
            let sql = "SELECT IntegerField FROM NewSurvey WHERE " + Array(repeating: "IntegerField = 1", count: 2000).joined(separator: " OR ")
            let (status, body) = try await queries.executeSQL(h, p.a, sql, method: .post)
            #expect(status == .badRequest)
            #expect(body.exception == "The query is longer than 16384 bytes.")
        }
    }

    @Test func aParticipantsQueriesRunAtMostTwoAtATime() async throws {
        try await ResponseHarness.run { h in
            let p = try await queries.populate(h)
            let logger = Logger(label: "test")
            // Two queries of A's "running": their slots held by another session.
            try await h.postgres.withConnection { holder in
                for slot: Int32 in 0..<2 {
                    try await holder.query(
                        "SELECT pg_advisory_lock(\(SandboxedQueries.slotLockSpace + slot), \(Int32(truncatingIfNeeded: p.aId)))",
                        logger: logger)
                }
                let (busy, body) = try await queries.executeSQL(h, p.a, "SELECT IntegerField FROM NewSurvey")
                #expect(busy == .badRequest)
                #expect(body.exception?.hasPrefix("You already have 2 queries running") == true, "\(body.exception ?? "")")
                // Another participant is not held back.
                #expect(try await queries.executeSQL(h, p.b, "SELECT IntegerField FROM NewSurvey").0 == .ok)
                try await holder.query("SELECT pg_advisory_unlock_all()", logger: logger)
            }
            #expect(try await queries.executeSQL(h, p.a, "SELECT IntegerField FROM NewSurvey").0 == .ok)
        }
    }
}
