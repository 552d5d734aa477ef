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

/// `selectRows` and `executeSQL`: the shapes the apps
/// parse, the queries they send, and a participant's isolation from everyone else's data, both
/// through the API and straight against PostgreSQL as the reader role.
@Suite(.needsCluster) struct ParticipantQueryTests {
    let fixture = QueryFixture()

    /// The values of column `name` in a 13.2 reply.
    func column(_ body: JSONValue, _ name: String) -> [JSONValue] {
        (body["rows"]?.array ?? []).map { $0["data"]?[name]?["value"] ?? .null }
    }

    @Test func theAppsDashboardAndAnchorQueriesGetThe13_2Shape() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            // The dashboard's statistic query, as the 2020 iOS app sends it (POST, query string, no body).
            let (status, body) = try await fixture.executeSQL(h, p.a, "SELECT IntegerField,Created FROM NewSurvey", method: .post)
            #expect(status == .ok, "\(body)")
            #expect(body["schemaName"] == .array([.string("MobileAppResponse")]))
            #expect(body["queryName"] == .string("sql"))
            #expect(body["rowCount"] == .number(1))
            #expect(column(body, "IntegerField") == [.number(1)])
            let created = try #require(column(body, "Created").first?.text)
            #expect(created.wholeMatch(of: /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}/) != nil, "\(created)")

            // An active task's keys, one quoted, from a table whose name has a hyphen.
            let (_, kicks) = try await fixture.executeSQL(h, p.a, "SELECT \"count\",duration,Created FROM \"FKC-74counter\"")
            #expect(column(kicks, "count") == [.number(33)])
            #expect(column(kicks, "duration") == [.number(200)])

            // Names in any case; the reply uses the column's own name.
            let (_, lower) = try await fixture.executeSQL(h, p.a, "select integerfield, created from newsurvey")
            #expect(column(lower, "IntegerField") == [.number(1)])

            // Joins and unions within the study.
            let (_, joined) = try await fixture.executeSQL(
                h, p.a,
                "SELECT s.IntegerField, k.\"count\" FROM NewSurvey s JOIN \"FKC-74counter\" k ON k.ParticipantId = s.ParticipantId")
            #expect(column(joined, "count") == [.number(33)])
            let (_, union) = try await fixture.executeSQL(
                h, p.a, "SELECT ParticipantId FROM NewSurvey UNION ALL SELECT ParticipantId FROM \"FKC-74counter\" ORDER BY 1")
            #expect(column(union, "ParticipantId") == [.number(Double(p.aId)), .number(Double(p.aId))])
            // Form-encoded, as curl's --data-urlencode sends it: `+` is a space.
            let (formStatus, form, _) = try await h.call(
                "mobileappstudy-executeSQL.api?participantId=\(p.a)&sql=SELECT+IntegerField%2C+Created+FROM+NewSurvey", method: .get)
            #expect(formStatus == .ok, "\(form)")
            #expect(column(form, "IntegerField") == [.number(1)])
            let (_, aggregate) = try await fixture.executeSQL(h, p.a, "SELECT COUNT(*) AS n, MAX(IntegerField) FROM NewSurvey")
            #expect(column(aggregate, "n") == [.number(1)])
            #expect(column(aggregate, "EXPR1") == [.number(1)])
        }
    }

    @Test func selectRowsAnswersInThe8_3Shape() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            let (status, body, _) = try await h.call(
                "mobileappstudy-selectRows.api",
                query: ["participantId": p.a, "queryName": "NewSurvey", "query.columns": "IntegerField,NoSuchColumn,Created"],
                method: .get)
            #expect(status == .ok, "\(body)")
            #expect(body["schemaName"] == .string("MobileAppResponse"))
            #expect(body["queryName"] == .string("NewSurvey"))
            #expect(body["formatVersion"] == .number(8.3))
            #expect(body["rowCount"] == .number(1))
            let row = try #require(body["rows"]?.array?.first?.object)
            // The unknown column is dropped silently, as LabKey drops it.
            #expect(Set(row.keys) == ["IntegerField", "Created"])
            #expect(row["IntegerField"] == .number(1))

            let (_, filtered, _) = try await h.call(
                "mobileappstudy-selectRows.api",
                query: ["participantId": p.a, "query.queryName": "NewSurvey", "query.IntegerField~gt": "5"], method: .get)
            #expect(filtered["rowCount"] == .number(0))

            let (missing, missingBody, _) = try await h.call(
                "mobileappstudy-selectRows.api", query: ["participantId": p.a], method: .get)
            #expect(missing == .badRequest)
            #expect(missingBody.exception == "No value was supplied for the required parameter 'queryName'")
            let (_, unknownBody, _) = try await h.call(
                "mobileappstudy-selectRows.api", query: ["participantId": p.a, "queryName": "Nope"], method: .get)
            #expect(unknownBody.exception == "Query 'Nope' doesn't exist")
        }
    }

    @Test func theParticipantChecksComeFirstWithTheOriginalsMessages() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            let (_, noToken) = try await fixture.executeSQL(h, "", "SELECT * FROM NewSurvey")
            #expect(noToken.exception == "ParticipantId not included in request")
            let (_, unknown) = try await fixture.executeSQL(h, String(repeating: "0", count: 32), "SELECT * FROM NewSurvey")
            #expect(unknown.exception == "Unable to identify participant")
            let (status, noSQL) = try await fixture.executeSQL(h, p.a, "  ")
            #expect(status == .badRequest)
            #expect(noSQL.exception == "No value was supplied for the required parameter 'sql'")
            let (_, syntax) = try await fixture.executeSQL(h, p.a, "SELECT * FROM NewSurvey WHERE never never")
            #expect(syntax.exception == "Syntax error near 'never'")
            let (_, users) = try await fixture.executeSQL(h, p.a, "SELECT * FROM core.Users")
            #expect(users.exception == "Query or table not found: core.Users")
            // A withdrawn participant's token no longer names anyone.
            _ = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": p.b])
            let (_, withdrawn) = try await fixture.executeSQL(h, p.b, "SELECT * FROM NewSurvey")
            #expect(withdrawn.exception == "Unable to identify participant")
        }
    }

    @Test func withdrawalWithDeleteEmptiesTheParticipantsRowsFromEveryTable() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            let (status, _, _) = try await h.call(
                "mobileappstudy-withdrawFromStudy.api", query: ["participantId": p.b, "delete": "true"])
            #expect(status == .ok)
            let schema = SQLName.quoted(SQLName.schema(forStudy: QueryFixture.study))
            for table in ["NewSurvey", "NewSurveyTextChoiceField", "NewSurveyGroupedList", "FKC-74counter"] {
                var owners: [Int64] = []
                for try await owner in try await h.postgres.query(
                    PostgresQuery(unsafeSQL: "SELECT DISTINCT \"ParticipantId\" FROM \(schema).\(SQLName.quoted(table))"),
                    logger: Logger(label: "test")
                ).decode(Int64.self) { owners.append(owner) }
                #expect(owners == [p.aId], "\(table)")
            }
            for try await (responses, timings) in try await h.postgres.query(
                """
                SELECT (SELECT count(*)::int FROM responses r JOIN participants x ON x.id = r.participant_id
                        WHERE x.study_key = \(QueryFixture.study) AND x.number = \(p.bId)),
                       (SELECT count(*)::int FROM response_metadata m JOIN participants x ON x.id = m.participant_id
                        WHERE x.study_key = \(QueryFixture.study) AND x.number = \(p.bId))
                """, logger: Logger(label: "test")
            ).decode((Int, Int).self) {
                #expect(responses == 0 && timings == 0)
            }
        }
    }

    enum Expectation: Sendable {
        /// 400 with a message.
        case refused
        /// 200, and every row's `ParticipantId` is the caller's.
        case onlyOwn
        /// 200 with exactly this many rows.
        case rows(Int)
        /// 200, and the first column of the single row is this number.
        case number(Double)
    }

    /// At least thirty attempts at other participants' and other studies' data, the catalogs,
    /// files and settings, or the sandbox itself, as participant A.
    func attacks(_ p: QueryFixture.Population) -> [(String, Expectation)] {
        let deep = String(repeating: "(", count: 200) + "1" + String(repeating: ")", count: 200)
        return [
            ("SELECT * FROM NewSurvey", .onlyOwn),
            ("SELECT * FROM NewSurvey WHERE ParticipantId = \(p.bId)", .rows(0)),
            ("SELECT * FROM NewSurvey WHERE ParticipantId <> \(p.aId)", .rows(0)),
            ("SELECT * FROM NewSurvey WHERE 1 = 1 OR ParticipantId = \(p.bId)", .onlyOwn),
            ("SELECT COUNT(*) FROM NewSurvey", .number(1)),
            ("SELECT COUNT(*) FROM NewSurvey a JOIN NewSurvey b ON TRUE", .number(1)),
            ("SELECT a.ParticipantId FROM NewSurvey a, \"FKC-74counter\" b", .onlyOwn),
            ("SELECT a.ParticipantId FROM NewSurvey a LEFT JOIN NewSurvey b ON a.Key <> b.Key", .onlyOwn),
            ("SELECT ParticipantId FROM NewSurvey UNION SELECT ParticipantId FROM \"FKC-74counter\"", .onlyOwn),
            ("SELECT ParticipantId FROM NewSurvey GROUP BY ParticipantId HAVING COUNT(*) >= 0", .onlyOwn),
            ("SELECT * FROM NewSurvey WHERE TextScaleField LIKE '%'", .onlyOwn),
            ("SELECT * FROM NewSurvey LIMIT 100000000", .onlyOwn),
            ("SELECT * FROM NewSurvey /* comment */ -- ; DROP TABLE NewSurvey", .onlyOwn),
            ("SELECT * FROM NewSurvey WHERE TextScaleField = 'x'' OR ''1''=''1'", .rows(0)),
            ("SELECT CASE WHEN ParticipantId = \(p.bId) THEN 1 ELSE 0 END FROM NewSurvey", .number(0)),
            ("SELECT * FROM core.Users", .refused),
            ("SELECT * FROM pg_catalog.pg_authid", .refused),
            ("SELECT * FROM pg_user", .refused),
            ("SELECT * FROM information_schema.tables", .refused),
            ("SELECT * FROM participants", .refused),
            ("SELECT * FROM public.responses", .refused),
            ("SELECT * FROM query_scope_key", .refused),
            ("SELECT * FROM \"study_MYTESTSTUDY\".\"NewSurvey\"", .refused),
            ("SELECT * FROM NewSurvey; DELETE FROM NewSurvey", .refused),
            ("SELECT pg_read_file('/etc/passwd') FROM NewSurvey", .refused),
            ("SELECT set_config('studystack.query_scope', '\(p.bId):00', false) FROM NewSurvey", .refused),
            ("SELECT current_setting('studystack.query_scope') FROM NewSurvey", .refused),
            ("SELECT pg_sleep(10) FROM NewSurvey", .refused),
            ("SELECT query_scope_participant() FROM NewSurvey", .refused),
            ("SELECT version()", .refused),
            ("SELECT * FROM NewSurvey WHERE TextScaleField = E'\\x27'", .refused),
            ("SELECT \"ParticipantId\"\" FROM participants --\" FROM NewSurvey", .refused),
            ("SELECT * FROM \"NewSurvey\"\", participants --\"", .refused),
            ("SELECT * FROM NewSurvey WHERE Key IN (SELECT id FROM participants)", .refused),
            ("SELECT * FROM (SELECT * FROM NewSurvey) x", .refused),
            ("WITH x AS (SELECT 1) SELECT * FROM NewSurvey", .refused),
            ("SELECT $1 FROM NewSurvey", .refused),
            ("SELECT IntegerField::text FROM NewSurvey", .refused),
            ("SELECT * FROM NewSurvey WHERE \(deep) = 1", .refused),
            ("SELECT * FROM NewSurvey WHERE TextScaleField = '" + String(repeating: "x", count: 11_000) + "'", .refused),
            ("SET ROLE postgres", .refused),
            ("COPY NewSurvey TO '/tmp/x'", .refused),
        ]
    }

    @Test func aParticipantSeesOnlyTheirOwnRowsWhateverTheQuerySays() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            let cases = attacks(p)
            #expect(cases.count >= 30)
            for (sql, expectation) in cases {
                let (status, body) = try await fixture.executeSQL(h, p.a, sql)
                let label = Comment(rawValue: "\(sql.prefix(120)): \(status) \(String(describing: body).prefix(300))")
                switch expectation {
                case .refused:
                    #expect(status == .badRequest, label)
                    #expect(body.exception?.isEmpty == false, label)
                case .onlyOwn:
                    #expect(status == .ok, label)
                    let owners = column(body, "ParticipantId")
                    #expect(!owners.isEmpty, label)
                    #expect(owners.allSatisfy { $0 == .number(Double(p.aId)) }, label)
                case .rows(let count):
                    #expect(status == .ok, label)
                    #expect(body["rows"]?.array?.count == count, label)
                case .number(let value):
                    #expect(status == .ok, label)
                    let first = body["rows"]?.array?.first?["data"]?.object?.values.first?["value"]
                    #expect(body["rows"]?.array?.count == 1 && first == .number(value), label)
                }
            }

            // Another study's participant sees their own study's "NewSurvey", and not this study's
            // active-task table at all.
            let (_, own) = try await fixture.executeSQL(h, p.c, "SELECT ParticipantId FROM NewSurvey")
            #expect(column(own, "ParticipantId") == [.number(Double(p.cId))])
            let (_, other) = try await fixture.executeSQL(h, p.c, "SELECT * FROM \"FKC-74counter\"")
            #expect(other.exception == "Query or table not found: FKC-74counter")

            // selectRows' filters cannot widen the scope either.
            for query in [
                ["queryName": "NewSurvey", "query.ParticipantId~eq": "\(p.bId)"],
                ["queryName": "NewSurvey", "query.ParticipantId~neq": "\(p.aId)"],
                ["queryName": "NewSurvey", "query.TextScaleField~contains": "' OR '1'='1"],
            ] {
                let (status, body, _) = try await h.call(
                    "mobileappstudy-selectRows.api", query: query.merging(["participantId": p.a]) { $1 }, method: .get)
                #expect(status == .ok && body["rowCount"] == .number(0), "\(query): \(body)")
            }
            for name in ["participants", "query_scope_key", "pg_authid"] {
                let (status, body, _) = try await h.call(
                    "mobileappstudy-selectRows.api", query: ["participantId": p.a, "queryName": name, "schemaName": "core"],
                    method: .get)
                #expect(status == .badRequest && body.exception == "Query '\(name)' doesn't exist", "\(name): \(body)")
            }
        }
    }

    /// The second lock, without the translator: connected as the reader role, arbitrary SQL
    /// still sees only the rows a scope signed by the service names.
    @Test func postgresItselfHoldsTheReaderToItsSignedScope() async throws {
        try await ResponseHarness.run { h in
            let p = try await fixture.populate(h)
            let table = "\(SQLName.quoted(SQLName.schema(forStudy: QueryFixture.study))).\"NewSurvey\""
            let readerURL = try await ResponseHarness.readerURL(h.databaseURL)
            let access = h.access
            try await TestDatabase.withClient(url: readerURL) { reader, logger in
                /// Whose rows the reader sees under `scope`, as itself or as `role`.
                func owners(_ scope: String?, as role: String? = nil) async throws -> [Int64] {
                    try await reader.withConnection { connection in
                        try await connection.query("BEGIN READ ONLY", logger: logger)
                        if let scope {
                            try await connection.query(
                                "SELECT set_config('studystack.query_scope', \(scope), true)", logger: logger)
                        }
                        if let role { try await connection.query("SELECT set_config('role', \(role), true)", logger: logger) }
                        var found: [Int64] = []
                        for try await id in try await connection.query(
                            PostgresQuery(unsafeSQL: "SELECT \"ParticipantId\" FROM \(table)"), logger: logger
                        ).decode(Int64.self) { found.append(id) }
                        try await connection.query("COMMIT", logger: logger)
                        return found
                    }
                }
                let unscoped = try await owners(nil)
                let scopedA = try await owners(access.scope(participantId: p.aId))
                let scopedB = try await owners(access.scope(participantId: p.bId))
                // A's signature with B's id, an unsigned id, a made-up signature: nothing.
                let signatureOfA = String(access.scope(participantId: p.aId).split(separator: ":")[1])
                let borrowed = try await owners("\(p.bId):\(signatureOfA)")
                let unsigned = try await owners("\(p.bId)")
                let madeUp = try await owners("\(p.bId):" + String(repeating: "0", count: 64))
                #expect(unscoped.isEmpty)
                #expect(scopedA == [p.aId])
                #expect(scopedB == [p.bId])
                #expect(borrowed.isEmpty && unsigned.isEmpty && madeUp.isEmpty)

                // A researcher's scope names the study: as the researcher role, all its rows, and
                // its mobileappstudy views; another study's scope, or a study scope with a
                // borrowed signature, nothing.
                let researcher = TestDatabase.queryResearcherRole
                let studyScope = access.scope(studyKey: QueryFixture.study)
                #expect(try await owners(studyScope, as: researcher).sorted() == [p.aId, p.bId].sorted())
                #expect(try await owners(access.scope(studyKey: "OTHERSTUDY"), as: researcher).isEmpty)
                let studySignature = String(studyScope.split(separator: ":").last!)
                #expect(try await owners("s:OTHERSTUDY:\(studySignature)", as: researcher).isEmpty)
                #expect(try await owners("s:\(QueryFixture.study)", as: researcher).isEmpty)
                // Each role has its own policy: the reader with a study's scope sees nothing, and
                // the researcher role with a participant's scope nothing either.
                #expect(try await owners(studyScope).isEmpty)
                #expect(try await owners(access.scope(participantId: p.aId), as: researcher).isEmpty)
                func viewed(_ scope: String, as role: String? = researcher) async throws -> Int {
                    try await reader.withConnection { connection in
                        try await connection.query("BEGIN READ ONLY", logger: logger)
                        try await connection.query("SELECT set_config('studystack.query_scope', \(scope), true)", logger: logger)
                        if let role { try await connection.query("SELECT set_config('role', \(role), true)", logger: logger) }
                        var count = 0
                        do {
                            for try await n in try await connection.query(
                                #"SELECT count(*)::int FROM mobileappstudy."Participant""#, logger: logger
                            ).decode(Int.self) { count = n }
                        } catch {
                            try await connection.query("ROLLBACK", logger: logger)
                            throw error
                        }
                        try await connection.query("COMMIT", logger: logger)
                        return count
                    }
                }
                #expect(try await viewed(studyScope) == 2)
                #expect(try await viewed(access.scope(participantId: p.aId)) == 0)
                #expect(try await viewed(access.scope(studyKey: "OTHERSTUDY")) == 0)
                // The views are the researcher role's: the reader itself may not read them.
                await #expect(throws: PSQLError.self) { _ = try await viewed(studyScope, as: nil) }

                func refused(_ sql: String) async -> Bool {
                    do {
                        try await reader.query(PostgresQuery(unsafeSQL: sql), logger: logger)
                        return false
                    } catch {
                        return error is PSQLError
                    }
                }
                for sql in [
                    "SET ROLE postgres", "SELECT * FROM participants", "SELECT * FROM query_scope_key",
                    "SELECT pg_read_file('/etc/passwd')", "INSERT INTO \(table) (\"ParticipantId\") VALUES (\(p.aId))",
                    "UPDATE query_scope_key SET key = key", "CREATE TABLE public.mine (x int)",
                ] {
                    let wasRefused = await refused(sql)
                    #expect(wasRefused, "\(sql)")
                }
            }

            // The statement timeout the service sets for each query stops a long one.
            let timedOut = try await TestDatabase.withClient(url: readerURL) { reader, logger in
                    await SandboxedQueries(
                        reader: reader, access: access,
                        limits: .init(timeout: .milliseconds(100), maxRows: 10, maxReplyBytes: 1 << 20, maxConcurrent: 2),
                        timeZone: TimeZone(identifier: "UTC")!, logger: logger
                    ).runCatching(QueryTranslator.Translation(sql: "SELECT pg_catalog.pg_sleep(2)", columns: ["x"]), participantId: p.aId)
                }
            #expect(timedOut == "The query ran longer than 100 ms and was stopped.")
        }
    }
}

extension SandboxedQueries {
    /// The message a query fails with, or nil when it succeeds.
    func runCatching(_ translation: QueryTranslator.Translation, participantId: Int64) async -> String? {
        do {
            _ = try await run(translation, participantId: participantId)
            return nil
        } catch {
            return error.message
        }
    }
}

