import Foundation
import Logging
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// A schema study from its protocol to its researchers' tables, over the real services: imported
/// with the admin API, launched, downloaded as the schema app downloads it, and fed the app's own
/// multipart POSTs (docs/schema-protocols.md).
@Suite(.needsCluster, .serialized) struct SchemaJourneyTests {
    static func protocolText() throws -> Data {
        try Data(contentsOf: Conformance.root.appendingPathComponent("schema/demo_protocol.json"))
    }

    /// A form as a WebView posts it: `multipart/form-data` with a browser-style boundary.
    static func multipart(_ fields: [(String, String)]) -> (body: Data, contentType: String) {
        let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        var body = ""
        for (name, value) in fields {
            body += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
        }
        body += "--\(boundary)--\r\n"
        return (Data(body.utf8), "multipart/form-data; boundary=\(boundary)")
    }

    static func surveyPost(user: String, studyId: String = "3ZDOGAH", alert: String = "2026-11-26T09:41:00+11:00") -> [(String, String)] {
        let answers = #"{"instruction-pvke1yey":"","text-71nnpqzi":"slept well","datetime-79ygddzl":"2026-11-26T09:50:12.345+11:00","multi-q8bohlar":"banana","instruction-mof4ymv4":"","media-o3p069gi":"","slider-0yih1evt":7,"yesno-mv09ggb1":"Yes"}"#
        return [
            ("data_type", "survey_response"), ("user_id", user), ("study_id", studyId), ("module_index", "1"),
            ("module_name", "Elements"), ("responses", answers), ("response_time", "2026-11-26T09:52:00+11:00"),
            ("response_time_in_ms", "1795646520000"), ("alert_time", alert), ("platform", "iphone"),
        ]
    }

    static func post(_ platform: Platform, _ fields: [(String, String)], study: String = "SCHEMADEMO") async throws -> Wire.Reply {
        let form = multipart(fields)
        return try await Wire.send(
            .POST, platform.response.baseURL + "/schema/\(study)/data",
            headers: [("Content-Type", form.contentType), ("Origin", "ionic://localhost")], raw: form.body)
    }

    static func count(_ platform: Platform, _ sql: PostgresQuery) async throws -> Int {
        try await platform.withResponseDatabase { client, _ in try await client.count(sql) }
    }

    @Test func aSchemaStudyFromImportToTablesWithRepliesStoredOnceAndArmsBalanced() async throws {
        try await Platform.run { platform in
            let admin = platform.admin
            // The import makes the study in DEMOAPP; a broken protocol is refused with its place.
            let broken = try await admin.send(.PUT, "/admin/v1/studies/SCHEMADEMO/imports/schema?appId=DEMOAPP", raw: Data("{\"properties\": ".utf8))
            #expect(broken.status == 422, "\(broken.text)")
            #expect(broken.json?["error"]?["problems"]?.array?.first?["pointer"] == .string(""))
            #expect(try await admin.send(.GET, "/admin/v1/studies/SCHEMADEMO").status == 404)

            let imported = try await admin.send(
                .PUT, "/admin/v1/studies/SCHEMADEMO/imports/schema?appId=DEMOAPP&timeZone=Australia/Melbourne", raw: try Self.protocolText())
            #expect(imported.status == 201, "\(imported.text)")
            #expect(imported.json?["activities"]?.array?.count == 2)
            #expect(imported.json?["arms"]?["names"] == .array([.string("Control"), .string("Treatment")]))
            #expect(imported.json?["warnings"]?.array?.first?["pointer"] == .string("/modules/1/alerts/timeout_after"))

            // Not launched: no protocol is served, and no data is taken.
            #expect(try await Wire.send(.GET, platform.metadata.baseURL + "/schema/SCHEMADEMO/protocol").status == 404)
            let launched = try await admin.send(.POST, "/admin/v1/studies/SCHEMADEMO/launch")
            #expect(launched.status == 200, "\(launched.text)")

            // The app POSTs `seed=...` form-encoded and reads the body as the protocol.
            let served = try await Wire.send(
                .POST, platform.metadata.baseURL + "/schema/SCHEMADEMO/protocol",
                headers: [("Content-Type", "application/x-www-form-urlencoded")], raw: Data("seed=f2d91e73".utf8))
            #expect(served.status == 200)
            let protocolValue = try #require(served.json)
            #expect(protocolValue["properties"]?["post_url"] == .string(platform.response.baseURL + "/schema/SCHEMADEMO/data"))
            #expect(protocolValue["properties"]?["study_id"] == .string("3ZDOGAH"))
            #expect(SchemaProtocolCheck.check(protocolValue).errors.isEmpty)
            let older = try await Wire.send(.GET, platform.metadata.baseURL + "/schema/SCHEMADEMO/protocol")
            #expect(older.status == 200 && older.body == served.body)

            // The launch reaches the response service through the outbox.
            try await eventually("the launch reached the response service", within: .seconds(30)) {
                try await Self.post(platform, Self.surveyPost(user: "23456789")).status == 200 ? true : nil
            }
            // The same POST twice more, as the app resends it: 200 `true`, with CORS, stored once.
            for _ in 0..<2 {
                let again = try await Self.post(platform, Self.surveyPost(user: "23456789"))
                #expect(again.status == 200 && again.text == "true")
                #expect(again.header("Access-Control-Allow-Origin") == "*")
            }
            #expect(try await Self.count(platform, "SELECT count(*)::int FROM responses WHERE activity_id <> 'SchemaLog'") == 1)
            let log = try await Self.post(platform, [
                ("data_type", "log"), ("user_id", "23456789"), ("study_id", "3ZDOGAH"), ("module_index", "-1"), ("page", "home"),
                ("event", "entry"), ("timestamp", "2026-11-26T09:40:00+11:00"), ("timestamp_in_ms", "1795646400000"),
                ("platform", "iphone"),
            ])
            #expect(log.status == 200, "\(log.text)")

            // Processed into the study's tables: the module's list, and the page events' list.
            let tables = try await eventually("both responses processed", within: .seconds(30)) { () -> Wire.Reply? in
                let count = try await Self.count(platform, "SELECT count(*)::int FROM responses WHERE status = 'processed'")
                return count == 2 ? try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/SCHEMADEMO/tables") : nil
            }
            let names = tables.json?["tables"]?.array?.compactMap { $0["name"]?.text } ?? []
            #expect(names.contains("dee87a08-8616-453a-9a6e-9e8f8ea9c942") && names.contains("SchemaLog"), "\(tables.text)")
            let rows = try await admin.send(
                .GET, platform.response.baseURL + "/admin/v1/studies/SCHEMADEMO/tables/dee87a08-8616-453a-9a6e-9e8f8ea9c942/rows")
            #expect(rows.status == 200, "\(rows.text)")
            #expect(rows.text.contains("slept well") && rows.text.contains("true"), "\(rows.text)")

            // Refused for good, with the field: a module the protocol does not have.
            var wrong = Self.surveyPost(user: "23456789", alert: "2026-11-27T09:41:00+11:00")
            wrong[3] = ("module_index", "9")
            let refused = try await Self.post(platform, wrong)
            #expect(refused.status == 422 && refused.json?["error"]?["field"] == .string("module_index"), "\(refused.text)")
            #expect(refused.header("Access-Control-Allow-Origin") == "*")

            // Eight more participants: two blocks of four, each block two of each arm.
            let users = ["2345678A", "2345678B", "2345678D", "2345678E", "2345678G", "2345678J", "2345678K", "2345678M"]
            for user in users { #expect(try await Self.post(platform, Self.surveyPost(user: user)).status == 200) }
            let arms = try await platform.withResponseDatabase { client, logger in
                var arms: [(String, String, Int)] = []
                for try await row in try await client.query(
                    "SELECT external_id, arm, arm_ordinal FROM participants WHERE external_id IS NOT NULL ORDER BY arm_ordinal",
                    logger: logger
                ).decode((String, String, Int).self) { arms.append(row) }
                return arms
            }
            try #require(arms.count == 9)
            #expect(arms.map(\.2) == Array(0..<9))
            for block in 0..<2 {
                let inBlock = arms[block * 4..<block * 4 + 4].map(\.1)
                #expect(inBlock.filter { $0 == "Control" }.count == 2, "block \(block): \(inBlock)")
            }
            // Reproducible: anyone holding the study's records computes the same arms.
            for (user, arm, ordinal) in arms {
                #expect(SchemaConditions.assign(
                    conditions: ["Control", "Treatment"], method: .block, studyKey: "SCHEMADEMO", participantId: user,
                    ordinal: ordinal) == arm)
            }
            // The admin APIs say where the app finds the study, and how many each arm has.
            let info = try await admin.send(.GET, "/admin/v1/studies/SCHEMADEMO/schema")
            #expect(info.json?["protocolURL"] == .string(platform.metadata.baseURL + "/schema/SCHEMADEMO/protocol"), "\(info.text)")
            #expect(info.json?["served"] == .bool(true))
            let listed = try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/SCHEMADEMO/schema-participants?limit=5")
            #expect(listed.status == 200, "\(listed.text)")
            let counts = listed.json?["arms"]?.array?.compactMap { $0["participants"]?.number } ?? []
            #expect(counts.count == 2 && counts.reduce(0, +) == 9 && Set(counts) == [4, 5], "\(listed.text)")
            #expect(listed.json?["participants"]?.array?.count == 5 && listed.json?["next"] != nil)
            let unsigned = try await Wire.send(.GET, platform.response.baseURL + "/admin/v1/studies/SCHEMADEMO/schema-participants")
            #expect(unsigned.status == 401)

            // A participant's arm stays theirs: a later POST from them changes nothing.
            #expect(try await Self.post(platform, Self.surveyPost(user: "23456789", alert: "2026-11-28T09:41:00+11:00")).status == 200)
            #expect(try await Self.count(platform, "SELECT count(*)::int FROM participants WHERE external_id = '23456789'") == 1)
            #expect(try await Self.count(platform, "SELECT assigned FROM arm_counters WHERE study_key = 'SCHEMADEMO'") == 9)

            // The app logs a withdrawal on its settings page, and a new enrolment on its home page.
            for (page, event, status) in [("settings", "withdraw", "withdrawn"), ("home", "enrol", "enrolled")] {
                let logged = try await Self.post(platform, [
                    ("data_type", "log"), ("user_id", "2345678A"), ("study_id", "3ZDOGAH"), ("module_index", "-1"), ("page", page),
                    ("event", event), ("timestamp", "2026-11-27T10:00:00+11:00"), ("platform", "iphone"),
                ])
                #expect(logged.status == 200, "\(logged.text)")
                #expect(try await Self.count(
                    platform, "SELECT count(*)::int FROM participants WHERE external_id = '2345678A' AND status = \(status)") == 1)
            }
            #expect(try await Self.count(
                platform,
                "SELECT count(*)::int FROM audit_events WHERE action IN ('participant.withdrawn', 'participant.rejoined') AND details->>'externalId' = '2345678A'"
            ) == 2)

            // After a restart of the response service nothing about arms is forgotten: the next
            // participant takes the tenth place, with the arm the blocks give it, and the first
            // keeps theirs.
            let restarted = try await platform.restartResponse()
            defer { restarted.stop() }
            #expect(try await Self.post(platform, Self.surveyPost(user: "2345678N")).status == 200)
            #expect(try await Self.post(platform, Self.surveyPost(user: "23456789", alert: "2026-11-29T09:41:00+11:00")).status == 200)
            let after = try await platform.withResponseDatabase { client, logger in
                var rows: [String: (String, Int)] = [:]
                for try await (user, arm, ordinal) in try await client.query(
                    "SELECT external_id, arm, arm_ordinal FROM participants WHERE external_id IN ('2345678N', '23456789')", logger: logger
                ).decode((String, String, Int).self) { rows[user] = (arm, ordinal) }
                return rows
            }
            #expect(after["23456789"]?.0 == arms[0].1 && after["23456789"]?.1 == 0)
            #expect(after["2345678N"]?.1 == 9)
            #expect(after["2345678N"]?.0 == SchemaConditions.assign(
                conditions: ["Control", "Treatment"], method: .block, studyKey: "SCHEMADEMO", participantId: "2345678N", ordinal: 9))

            // Sixteen people open the app at once, and each phone sends its first POST twice: each
            // is enrolled once, the places 10 to 25 are each taken once (so every block stays
            // balanced), and each POST is stored once.
            let crowd = (0..<16).map { String(format: "3456789%@", String(UnicodeScalar(UInt8(65 + $0)))) }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for user in crowd + crowd { group.addTask { try await Self.post(platform, Self.surveyPost(user: user)).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 32 && statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            let enrolled = try await platform.withResponseDatabase { client, logger in
                var rows: [(String, String, Int)] = []
                for try await row in try await client.query(
                    "SELECT external_id, arm, arm_ordinal FROM participants WHERE external_id LIKE '3456789_' ORDER BY arm_ordinal",
                    logger: logger
                ).decode((String, String, Int).self) { rows.append(row) }
                return rows
            }
            try #require(enrolled.count == 16)
            #expect(enrolled.map(\.2) == Array(10..<26))
            #expect(Set(enrolled.map(\.0)) == Set(crowd))
            for (user, arm, ordinal) in enrolled {
                #expect(arm == SchemaConditions.assign(
                    conditions: ["Control", "Treatment"], method: .block, studyKey: "SCHEMADEMO", participantId: user, ordinal: ordinal))
            }
            #expect(try await Self.count(platform, "SELECT assigned FROM arm_counters WHERE study_key = 'SCHEMADEMO'") == 26)
            #expect(try await Self.count(
                platform,
                "SELECT count(*)::int FROM responses r JOIN participants p ON p.id = r.participant_id WHERE p.external_id LIKE '3456789_'"
            ) == 16)
            #expect(try await Self.count(
                platform,
                "SELECT count(*)::int FROM audit_events WHERE action = 'participant.enrolled' AND details->>'externalId' LIKE '3456789_'"
            ) == 16)
        }
    }
}

extension SchemaJourneyTests {
    /// Behind PgBouncer in transaction mode the receiver's group-commit statement runs unnamed:
    /// the app's replays are still stored once, and processed.
    @Test func repliesAreStoredOnceBehindPgBouncerInTransactionMode() async throws {
        try await Platform.run(throughPgBouncer: true) { platform in
            let admin = platform.admin
            let imported = try await admin.send(
                .PUT, "/admin/v1/studies/SCHEMADEMO/imports/schema?appId=DEMOAPP", raw: try Self.protocolText())
            #expect(imported.status == 201, "\(imported.text)")
            #expect(try await admin.send(.POST, "/admin/v1/studies/SCHEMADEMO/launch").status == 200)
            try await eventually("the launch reached the response service", within: .seconds(30)) {
                try await Self.post(platform, Self.surveyPost(user: "23456789")).status == 200 ? true : nil
            }
            for _ in 0..<3 { #expect(try await Self.post(platform, Self.surveyPost(user: "23456789")).status == 200) }
            #expect(try await Self.post(platform, Self.surveyPost(user: "23456789", alert: "2026-11-27T09:41:00+11:00")).status == 200)
            try await eventually("both responses processed", within: .seconds(30)) { () -> Bool? in
                try await Self.count(platform, "SELECT count(*)::int FROM responses WHERE status = 'processed'") == 2 ? true : nil
            }
            #expect(try await Self.count(platform, "SELECT count(*)::int FROM responses") == 2)
        }
    }
}

/// What an unauthenticated sender can do to a schema study's data URL: the app sends no
/// credential, so the bounds are the study's state, the body's size and shape, and a rate per
/// address; each refusal stores nothing and still carries CORS.
@Suite(.needsCluster, .serialized) struct SchemaDataAttackTests {
    @Test func floodsOversizedFormsAndUnknownStudiesAreRefusedWithNothingStored() async throws {
        try await Platform.run(responseSettings: ["SCHEMA_POSTS_PER_MINUTE": "6"]) { platform in
            let admin = platform.admin
            let imported = try await admin.send(
                .PUT, "/admin/v1/studies/SCHEMADEMO/imports/schema?appId=DEMOAPP", raw: try SchemaJourneyTests.protocolText())
            #expect(imported.status == 201, "\(imported.text)")
            // Before launch the study takes nothing.
            let early = try await SchemaJourneyTests.post(platform, SchemaJourneyTests.surveyPost(user: "23456789"))
            #expect(early.status == 404 && early.header("Access-Control-Allow-Origin") == "*", "\(early.text)")
            #expect(try await admin.send(.POST, "/admin/v1/studies/SCHEMADEMO/launch").status == 200)
            // The launch reaches the response service through the outbox (asked without a POST,
            // which the limit would count).
            try await eventually("the launch reached the response service", within: .seconds(30)) {
                try await admin.send(.GET, platform.response.baseURL + "/admin/v1/studies/SCHEMADEMO/tables").status == 200 ? true : nil
            }

            // More than 32 fields, and a body over 256 KiB.
            let many = SchemaJourneyTests.surveyPost(user: "2345678A") + (0..<30).map { ("extra\($0)", "x") }
            let tooMany = try await SchemaJourneyTests.post(platform, many)
            var big = SchemaJourneyTests.surveyPost(user: "2345678B")
            big[5] = ("responses", "{\"text-71nnpqzi\": \"" + String(repeating: "a", count: 300_000) + "\"}")
            let tooBig = try await SchemaJourneyTests.post(platform, big)
            // A field sent twice: which value the app meant cannot be told.
            let twice = try await SchemaJourneyTests.post(platform, SchemaJourneyTests.surveyPost(user: "2345678D") + [("user_id", "OTHER")])
            #expect(tooMany.status == 422, "\(tooMany.text)")
            #expect(tooBig.status == 413, "\(tooBig.text)")
            #expect(twice.status == 422 && twice.json?["error"]?["field"] == .string("user_id"), "\(twice.text)")
            #expect([tooMany, tooBig, twice].allSatisfy { $0.header("Access-Control-Allow-Origin") == "*" })
            // A study that does not exist.
            let unknown = try await SchemaJourneyTests.post(platform, SchemaJourneyTests.surveyPost(user: "2345678E"), study: "NOSUCHSTUDY")
            #expect(unknown.status == 404)

            // Six POSTs a minute from this address (five are spent above): the seventh and later are 429.
            var statuses: [Int] = []
            for index in 0..<4 {
                statuses.append(try await SchemaJourneyTests.post(
                    platform, SchemaJourneyTests.surveyPost(user: "2345678G", alert: "2026-11-2\(index)T09:41:00+11:00")).status)
            }
            #expect(statuses == [200, 429, 429, 429], "\(statuses)")
            #expect(try await SchemaJourneyTests.count(platform, "SELECT count(*)::int FROM participants WHERE external_id IS NOT NULL") == 1)
            #expect(try await SchemaJourneyTests.count(platform, "SELECT count(*)::int FROM responses") == 1)
            #expect(try await SchemaJourneyTests.count(
                platform, "SELECT count(*)::int FROM participants WHERE external_id IN ('2345678A', '2345678B', '2345678D', '2345678E')") == 0)
        }
    }
}
