import Foundation
import HummingbirdTesting
import JSONText
import Logging
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The data-grid API over a study's response tables: the tables with their types and children,
/// and pages sorted either way by any column, filtered, and continued by cursor without a row
/// lost or repeated.
@Suite(.needsCluster) struct ResponseTableGridTests {
    let admin = ResponseAdmin()

    func number(_ value: JSONValue) -> Double? {
        if case .number(let number) = value { number.double } else { nil }
    }

    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// Submits the original's NewSurvey response once per participant, with `ShortTextField` and
    /// `IntegerField` set per participant; returns the app tokens.
    func submit(_ h: ResponseHarness, values: [(text: String, number: Int)]) async throws -> [String] {
        let design = try String(contentsOf: ProcessingFixture.file("NewSurvey", "1"), encoding: .utf8)
        try await h.sql(
            """
            INSERT INTO activity_designs (study_key, activity_id, version, design)
            VALUES ('SLEEPWELL', 'NewSurvey', '1', \(design)::jsonb) ON CONFLICT DO NOTHING
            """)
        let original = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: ProcessingFixture.file("NewSurvey", "1", response: true)))
                as? [String: Any])
        let processing = ProcessingFixture()
        var tokens: [String] = []
        for value in values {
            var data = original
            var results = try #require(data["results"] as? [[String: Any]])
            for index in results.indices {
                if results[index]["key"] as? String == "ShortTextField" { results[index]["value"] = value.text }
                if results[index]["key"] as? String == "IntegerField" { results[index]["value"] = value.number }
            }
            data["results"] = results
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            let (status, _, _) = try await h.call(
                "mobileappstudy-processResponse.api",
                json: ["type": "SurveyResponse", "participantId": appToken,
                       "metadata": ["activityId": "NewSurvey", "version": "1"], "data": data])
            #expect(status == .ok)
            #expect(try await processing.settled(h, try await processing.latest(h)).0 == "processed")
            tokens.append(appToken)
        }
        return tokens
    }

    /// Every row of a sorted view, page by page; the cursor must end the walk.
    func walk(_ client: some TestClientProtocol, _ root: String, _ path: String, limit: Int) async throws -> [[JSONValue]] {
        var rows: [[JSONValue]] = []
        var after: String?
        for _ in 0..<100 {
            let uri = path + "&limit=\(limit)" + (after.map { "&after=\($0)" } ?? "")
            let (status, body, _) = try await admin.send(client, .get, uri, token: root)
            #expect(status == .ok, "\(body)")
            let page = try json(body)
            let pageRows = (page["rows"]?.array ?? []).map { $0.array ?? [] }
            #expect(pageRows.count <= limit)
            rows += pageRows
            guard let next = page["next"]?.text else { return rows }
            after = next
        }
        Issue.record("paging did not end")
        return rows
    }

    @Test func tablesAreListedWithTypesChildrenAndCounts() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let tokens = try await submit(h, values: [("alpha", 3), ("beta", 1)])
            #expect(tokens.count == 2)

            // One participant's responses by the hash registration knows them by.
            let (byHash, byHashBody, _) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/responses?appTokenSHA256=\(SecureToken.hash(tokens[1]))", token: root)
            #expect(byHash == .ok)
            let theirs = try json(byHashBody)["responses"]?.array ?? []
            #expect(theirs.count == 1)
            let participant = try #require(theirs.first.flatMap { number($0["participantId"] ?? .null) })
            let (byNumber, byNumberBody, _) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/responses?participant=\(Int(participant))", token: root)
            #expect(byNumber == .ok)
            #expect(try json(byNumberBody)["responses"]?.array?.count == 1)
            #expect(theirs.first?["attempts"].flatMap { number($0) }.map { $0 >= 1 } == true, "processing was tried")
            // By activity, in any case.
            let (_, byActivity, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/responses?activity=newsurvey", token: root)
            #expect(try json(byActivity)["responses"]?.array?.count == 2)
            let (_, noActivity, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/responses?activity=other", token: root)
            #expect(try json(noActivity)["responses"]?.array?.count == 0)
            #expect(
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/responses?appTokenSHA256=zz", token: root).0
                    == .badRequest)
            #expect(
                try await admin.send(
                    client, .get, "/admin/v1/studies/SLEEPWELL/responses?appTokenSHA256=\(String(repeating: "a", count: 64))",
                    token: root
                ).1.contains("\"responses\":[]"))

            // Counted per day: both arrived today.
            let (dailyStatus, dailyBody, _) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/responses/daily?days=7", token: root)
            #expect(dailyStatus == .ok)
            let daily = try JSONDecoder().decode(DailyResponses.self, from: Data(dailyBody.utf8))
            #expect(daily.to == UTCDay.string(.now))
            #expect(daily.from == UTCDay.string(UTCDay.start(of: .now, offset: -6)))
            #expect(daily.activities == [.init(activityId: "NewSurvey", days: [.init(date: UTCDay.string(.now), count: 2)])])
            #expect(
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/responses/daily?days=400", token: root).0
                    == .badRequest)

            let (status, body, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/tables", token: root)
            #expect(status == .ok, "\(body)")
            let tables = try json(body)["tables"]?.array ?? []
            let survey = try #require(tables.first { $0["name"] == .string("NewSurvey") })
            #expect(survey["rows"] == .number(2))
            #expect(survey["rowsExact"] == .bool(true), "a small table is counted")
            #expect(survey["parent"] == .null)
            #expect(survey["children"]?.array?.contains(.string("NewSurveyTextChoiceField")) == true)
            let types = Dictionary(
                uniqueKeysWithValues: (survey["columns"]?.array ?? []).compactMap { column in
                    column["name"]?.text.map { ($0, column["type"]?.text ?? "") }
                })
            #expect(types["Key"] == "key")
            #expect(types["Created"] == "date-time")
            #expect(types["IntegerField"] == "number")
            #expect(types["BooleanField"] == "boolean")
            #expect(types["ShortTextField"] == "text")
            #expect(types["DateField"] == "date-time")
            let child = try #require(tables.first { $0["name"] == .string("NewSurveyTextChoiceField") })
            #expect(child["parent"] == .string("NewSurvey"))
            #expect((child["columns"]?.array ?? []).contains { $0["name"] == .string("NewSurveyId") })

            // A viewer of nothing, and nobody, see nothing.
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/tables", token: nil).0 == .unauthorized)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/NOSUCH/tables", token: root).0 == .notFound)
        }
    }

    @Test func aLargeTablesRowsAreTheDatabasesEstimateAndSaidSo() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            _ = try await submit(h, values: [("alpha", 1), ("bravo", 2)])
            // Past what one view counts (50,000 rows), straight into the table, and the
            // statistics taken as autovacuum would take them.
            try await h.sql(
                """
                INSERT INTO "study_SLEEPWELL"."NewSurvey" ("ParticipantId", "IntegerField")
                SELECT (SELECT min("ParticipantId") FROM "study_SLEEPWELL"."NewSurvey"), i % 7
                FROM generate_series(1, 60000) i
                """)
            try await h.sql(#"ANALYZE "study_SLEEPWELL"."NewSurvey""#)
            let (status, body, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/tables", token: root)
            #expect(status == .ok, "\(body)")
            let tables = try json(body)["tables"]?.array ?? []
            let survey = try #require(tables.first { $0["name"] == .string("NewSurvey") })
            #expect(survey["rowsExact"] == .bool(false))
            guard case .number(let rows) = survey["rows"] else { Issue.record("no rows: \(survey)"); return }
            #expect(abs(rows.double - 60_002) < 6_000, "an estimate within a tenth of the 60,002 rows: \(rows)")
            // A small table is still counted exactly.
            let child = try #require(tables.first { $0["name"] == .string("NewSurveyTextChoiceField") })
            #expect(child["rowsExact"] == .bool(true))
        }
    }

    @Test func pagesSortFilterAndContinueWithoutLosingOrRepeatingRows() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let tokens = try await submit(h, values: [("bravo", 2), ("alpha", 5), ("charlie", 2)])
            #expect(tokens.count == 3)
            // More rows than a page, with ties and missing values, written straight to the table.
            try await h.sql(
                """
                INSERT INTO "study_SLEEPWELL"."NewSurvey" ("ParticipantId", "IntegerField", "ShortTextField")
                SELECT (SELECT min("ParticipantId") FROM "study_SLEEPWELL"."NewSurvey"),
                       CASE WHEN i % 3 = 0 THEN NULL ELSE i % 4 END, 'row ' || (i % 5)
                FROM generate_series(1, 22) i
                """)
            var all: [(key: Int, number: Double?)] = []
            for try await (key, number) in try await postgres.query(
                #"SELECT "Key", "IntegerField" FROM "study_SLEEPWELL"."NewSurvey""#, logger: Logger(label: "test")
            ).decode((Int, Double?).self) { all.append((key, number)) }
            #expect(all.count == 25)

            let base = "/admin/v1/studies/SLEEPWELL/tables/NewSurvey/rows?"
            let columns = try json(try await admin.send(client, .get, base, token: root).1)["columns"]?.array ?? []
            let keyIndex = try #require(columns.firstIndex { $0["name"] == .string("Key") })
            let numberIndex = try #require(columns.firstIndex { $0["name"] == .string("IntegerField") })
            func keys(_ rows: [[JSONValue]]) -> [Int] { rows.compactMap { number($0[keyIndex]).map { Int($0) } } }

            // By key, pages of 4: every row once, in order.
            let byKey = try await walk(client, root, base + "sort=Key", limit: 4)
            #expect(byKey.count == 25)
            #expect(keys(byKey) == all.map(\.key).sorted())

            // By a number with ties and missing values, either way: the key breaks ties, missing
            // values come last ascending and first descending.
            let ascending = all.sorted { a, b in
                switch (a.number, b.number) {
                case let (x?, y?): x != y ? x < y : a.key < b.key
                case (nil, nil): a.key < b.key
                case (nil, _): false
                case (_, nil): true
                }
            }
            let up = try await walk(client, root, base + "sort=integerfield&order=asc", limit: 4)
            #expect(up.count == 25)
            #expect(keys(up) == ascending.map(\.key))
            let down = try await walk(client, root, base + "sort=IntegerField&order=desc", limit: 3)
            #expect(down.count == 25)
            #expect(keys(down) == ascending.reversed().map(\.key))
            #expect(down.first?[numberIndex] == .null)

            // By text: the three submitted answers in order.
            let text = try await walk(client, root, base + "sort=ShortTextField&order=desc", limit: 5)
            #expect(text.count == 25)
            let textIndex = try #require(columns.firstIndex { $0["name"] == .string("ShortTextField") })
            let words = text.compactMap { $0[textIndex].text }
            #expect(words == words.sorted(by: >))

            // One participant's rows; the rows of a day; nothing after today.
            let participantIndex = try #require(columns.firstIndex { $0["name"] == .string("ParticipantId") })
            let second = try #require(byKey.compactMap { number($0[participantIndex]) }.sorted().last)
            let theirs = try await walk(client, root, base + "participant=\(Int(second))", limit: 10)
            #expect(theirs.count == 1)
            #expect(theirs.first?[numberIndex] == .number(2))
            let today = Date.now.formatted(Date.ISO8601FormatStyle().year().month().day().dateSeparator(.dash))
            let tomorrow = Date.now.addingTimeInterval(86_400).formatted(
                Date.ISO8601FormatStyle().year().month().day().dateSeparator(.dash))
            #expect(try await walk(client, root, base + "from=\(today)&to=\(today)", limit: 50).count == 25)
            #expect(try await walk(client, root, base + "from=\(tomorrow)", limit: 50).count == 0)

            // A child table, under one parent row.
            let parentKey = keys(byKey)[0]
            let children = try await walk(
                client, root, "/admin/v1/studies/SLEEPWELL/tables/NewSurveyTextChoiceField/rows?parent=\(parentKey)", limit: 50)
            var expected = 0
            for try await count in try await postgres.query(
                #"SELECT count(*)::int FROM "study_SLEEPWELL"."NewSurveyTextChoiceField" WHERE "NewSurveyId" = \#(parentKey)"#,
                logger: Logger(label: "test")
            ).decode(Int.self) { expected = count }
            #expect(expected > 0)
            #expect(children.count == expected)
        }
    }

    /// A sort by a question asks for an index on what it sorts by (`GridSortIndexes`), built in
    /// the background; the pages read through it are the pages read without it.
    @Test func aSortByAQuestionGetsItsIndexAndTheSameRows() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            #expect(try await submit(h, values: [("bravo", 2), ("alpha", 5), ("charlie", 2)]).count == 3)
            let base = "/admin/v1/studies/SLEEPWELL/tables/NewSurvey/rows?"
            let byNumber = try await walk(client, root, base + "sort=IntegerField&order=desc", limit: 2)
            let byText = try await walk(client, root, base + "sort=ShortTextField&order=asc", limit: 2)
            #expect(byNumber.count == 3 && byText.count == 3)
            var definitions: [String] = []
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while ContinuousClock.now < deadline {
                definitions = []
                for try await definition in try await postgres.query(
                    """
                    SELECT pg_get_indexdef(c.oid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                    JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
                    WHERE n.nspname = 'study_SLEEPWELL' AND t.relname = 'NewSurvey' AND starts_with(c.relname, 'grid_')
                      AND i.indisvalid ORDER BY 1
                    """, logger: Logger(label: "test")
                ).decode(String.self) { definitions.append(definition) }
                if definitions.count == 2 { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(definitions.count == 2, "\(definitions)")
            #expect(definitions.contains { $0.contains(#"("IntegerField", "Key")"#) }, "\(definitions)")
            #expect(definitions.contains { $0.contains("left") && $0.contains(#""ShortTextField""#) }, "\(definitions)")
            #expect(try await walk(client, root, base + "sort=IntegerField&order=desc", limit: 2) == byNumber)
            #expect(try await walk(client, root, base + "sort=ShortTextField&order=asc", limit: 2) == byText)
        }
    }

    @Test func badParametersAreRefusedWithTheirNames() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            _ = try await submit(h, values: [("alpha", 1), ("beta", 2)])
            let base = "/admin/v1/studies/SLEEPWELL/tables/NewSurvey/rows?"
            let first = try json(try await admin.send(client, .get, base + "limit=1", token: root).1)
            let cursor = try #require(first["next"]?.text)
            let cases: [(String, String)] = [
                ("sort=Nope", "sort"), ("order=sideways", "order"), ("participant=x", "participant"),
                ("from=yesterday", "from"), ("to=2026-13-40", "to"), ("from=2026-02-02&to=2026-01-01", "to"),
                ("parent=1", "parent"), ("limit=0", "limit"), ("limit=501", "limit"),
                ("after=garbage", "after"), ("after=\(cursor)&sort=ShortTextField", "after"),
                ("after=\(cursor)&order=desc", "after"),
            ]
            for (query, field) in cases {
                let (status, body, _) = try await admin.send(client, .get, base + query, token: root)
                #expect(status == .badRequest, "\(query): \(body)")
                #expect(try json(body)["error"]?["message"]?.text?.hasPrefix(field + " ") == true, "\(query): \(body)")
            }
            // A cursor whose value was tampered with is refused, not passed to the database.
            let forged = TableGridCursorForgery.cursor(column: "IntegerField", value: "1; DROP TABLE x")
            let (forgedStatus, _, _) = try await admin.send(client, .get, base + "sort=IntegerField&after=\(forged)", token: root)
            #expect(forgedStatus == .badRequest)
            // One that has a date's shape but is none: refused too, not a database error.
            let month13 = TableGridCursorForgery.cursor(column: "Created", value: "2026-13-45 25:61:00+00")
            let (month13Status, month13Body, _) = try await admin.send(client, .get, base + "sort=Created&after=\(month13)", token: root)
            #expect(month13Status == .badRequest, "\(month13Body)")
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/tables/Nope/rows", token: root).0 == .notFound)
            #expect(
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/tables/NewSurvey/rows", token: nil).0
                    == .unauthorized)
        }
    }
}

/// A cursor written by hand, as an attacker would.
enum TableGridCursorForgery {
    static func cursor(column: String, value: String) -> String {
        let data = try! JSONEncoder().encode([column, "asc", value, "1"])
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
