import Foundation
import HTTPTypes
import HummingbirdTesting
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

/// The admin API for a study's responses and forwarding, with study-metadata (live) answering
/// who a bearer token belongs to.
@Suite(.needsCluster) struct ResponseAdminResponsesTests {
    let admin = ResponseAdmin()

    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test func forwardingSettingsAreValidatedRedactedAndAudited() async throws {
        try await admin.withServices { client, _, root, postgres in
            let path = "/admin/v1/studies/SLEEPWELL/forwarding"
            let (initial, initialBody, _) = try await admin.send(client, .get, path, token: root)
            #expect(initial == .ok)
            #expect(try json(initialBody)["type"] == .string("disabled"))

            // Each mistake named, nothing stored.
            let (bad, badBody, _) = try await admin.send(
                client, .put, path, token: root, body: #"{"type": "Basic", "url": "not a url", "username": " "}"#)
            #expect(bad == .unprocessableContent)
            let messages = (try json(badBody)["error"]?["problems"]?.array ?? []).compactMap { $0["message"]?.text }
            #expect(messages == ["Forwarding endpoint URL is malformed", "Field cannot be blank.", "Field cannot be blank."])
            let (plain, plainBody, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "Basic", "url": "http://example.org/in", "username": "u", "password": "p"}"#)
            #expect(plain == .unprocessableContent, "\(plainBody)")
            let (oauth, oauthBody, _) = try await admin.send(
                client, .put, path, token: root, body: #"{"type": "OAuth", "url": "https://example.org/in"}"#)
            #expect(oauth == .unprocessableContent)
            #expect((try json(oauthBody)["error"]?["problems"]?.array ?? []).count == 3)
            #expect(try await admin.send(client, .put, path, token: root, body: #"{"type": "FTP"}"#).0 == .unprocessableContent)
            #expect(try await admin.send(client, .get, path, token: root).1.contains("\"disabled\""))

            // Stored; shown without the password; a redacted password keeps it.
            let (saved, savedBody, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "Basic", "url": "https://example.org/in", "username": "u", "password": "first-secret"}"#)
            #expect(saved == .ok, "\(savedBody)")
            #expect(!savedBody.contains("first-secret"))
            #expect(try json(savedBody)["password"] == .string("***REDACTED***"))
            let (kept, _, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "basic", "url": "https://example.org/in", "username": "u", "password": "***REDACTED***"}"#)
            #expect(kept == .ok)
            let (changed, _, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "basic", "url": "https://example.org/other", "username": "u2", "password": "second-secret"}"#)
            #expect(changed == .ok)
            let store = ForwardingFixture.store(on: postgres)
            #expect(
                try await store.settings(studyKey: "SLEEPWELL")?.target
                    == .basic(url: URL(string: "https://example.org/other")!, username: "u2", password: "second-secret"))
            var actions: [String] = []
            for try await action in try await postgres.query(
                "SELECT action FROM audit_events WHERE action LIKE 'forwarding.%'", logger: Logger(label: "test")
            ).decode(String.self) { actions.append(action) }
            #expect(actions == ["forwarding.updated", "forwarding.updated", "forwarding.updated"])

            // Viewers of nothing, and anonymous callers, are refused.
            #expect(try await admin.send(client, .get, path, token: nil).0 == .unauthorized)
        }
    }

    @Test func failedResponsesAreListedAndReprocessedOnlyWhenInError() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            // A design the rules refuse: its response fails, and fails again when reprocessed.
            let empty = try String(contentsOf: ProcessingFixture.file("empty", "1.0"), encoding: .utf8)
            try await h.sql(
                """
                INSERT INTO activity_designs (study_key, activity_id, version, design)
                VALUES ('SLEEPWELL', 'empty', '1.0', \(empty)::jsonb)
                """)
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            let (submitted, _, _) = try await h.call(
                "mobileappstudy-processResponse.api",
                json: ["type": "SurveyResponse", "participantId": appToken, "metadata": ["activityId": "empty", "version": "1.0"],
                       "data": ["results": []]])
            #expect(submitted == .ok)
            let processing = ProcessingFixture()
            let id = try await processing.latest(h)
            #expect(try await processing.settled(h, id).0 == "error")

            let (listed, listBody, _) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/responses?status=error", token: root)
            #expect(listed == .ok)
            let rows = try json(listBody)["responses"]?.array ?? []
            #expect(rows.count == 1)
            #expect(rows.first?["errorMessage"]?.text == "Design document does not contain all the required fields (activityId, steps)")
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/responses?status=odd", token: root).0 == .badRequest)

            let reprocess = "/admin/v1/studies/SLEEPWELL/responses/reprocess"
            #expect(try await admin.send(client, .post, reprocess, token: root, body: #"{"ids": []}"#).1.contains("No responses to reprocess"))
            let (done, doneBody, _) = try await admin.send(client, .post, reprocess, token: root, body: #"{"ids": [\#(id), 999999]}"#)
            #expect(done == .ok)
            #expect(try json(doneBody) == .object(["countReprocessed": .number(1), "notReprocessed": .array([.number(999_999)])]))
            // Processed again, from the start, with the same outcome.
            try await eventually("response \(id) processed again, to the same error", within: .seconds(20)) {
                var status = ""
                for try await value in try await postgres.query(
                    "SELECT status FROM responses WHERE id = \(id)", logger: Logger(label: "test")
                ).decode(String.self) { status = value }
                return status
            } until: { $0 == "error" }
            var actions: [String] = []
            for try await action in try await postgres.query(
                "SELECT action FROM audit_events WHERE action = 'responses.reprocessed'", logger: Logger(label: "test")
            ).decode(String.self) { actions.append(action) }
            #expect(actions.count == 1)
        }
    }
}

/// Researcher exports: every participant's rows of every table, as CSV files in a zip (checked
/// by Python's zipfile, an independent reader) and as JSON lines.
@Suite(.needsCluster) struct ResponseExportTests {
    let admin = ResponseAdmin()

    @Test func aStudysTablesExportAsAZipOfCSVFilesAndAsJSONLines() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let design = try String(contentsOf: ProcessingFixture.file("NewSurvey", "1"), encoding: .utf8)
            try await h.sql(
                """
                INSERT INTO activity_designs (study_key, activity_id, version, design)
                VALUES ('SLEEPWELL', 'NewSurvey', '1', \(design)::jsonb)
                """)
            let original = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: ProcessingFixture.file("NewSurvey", "1", response: true)))
                    as? [String: Any])
            // The second participant's short text is what a spreadsheet would run as a formula.
            var tricky = original
            var results = try #require(tricky["results"] as? [[String: Any]])
            let index = try #require(results.firstIndex { $0["key"] as? String == "ShortTextField" })
            results[index]["value"] = "=HYPERLINK(\"x\"), line\nbreak"
            tricky["results"] = results
            let processing = ProcessingFixture()
            for data in [original, tricky] {
                let (_, enrolled, _) = try await h.call(
                    "mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
                let appToken = try #require(enrolled["data"]?["appToken"]?.text)
                let (status, _, _) = try await h.call(
                    "mobileappstudy-processResponse.api",
                    json: ["type": "SurveyResponse", "participantId": appToken,
                           "metadata": ["activityId": "NewSurvey", "version": "1"], "data": data])
                #expect(status == .ok)
                #expect(try await processing.settled(h, try await processing.latest(h)).0 == "processed")
            }

            // One table left empty: it is exported all the same.
            try await h.sql(#"DELETE FROM "study_SLEEPWELL"."NewSurveyGroupedListSubGroupedList""#)
            // JSON lines: one object per row, every table, exact values.
            let (linesStatus, lines, linesHeaders) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/export.jsonl", token: root)
            #expect(linesStatus == .ok)
            #expect(linesHeaders[.contentType] == "application/x-ndjson; charset=utf-8")
            let objects = try lines.split(separator: "\n").map { try JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
            let survey = objects.filter { $0["table"] == .string("NewSurvey") }.compactMap { $0["row"] }
            #expect(survey.count == 2)
            #expect(survey.map { $0["IntegerField"] } == [.number(1), .number(1)])
            #expect(survey.last?["ShortTextField"] == .string("=HYPERLINK(\"x\"), line\nbreak"))
            let tables = Set(objects.compactMap { $0["table"]?.text })
            #expect(tables.isSuperset(of: ["NewSurvey", "NewSurveyTextChoiceField", "NewSurveyGroupedList"]))
            // Every table has its line of typed columns before its rows, an empty one too.
            let headers = objects.filter { $0["columns"] != nil }
            #expect(Set(headers.compactMap { $0["table"]?.text }) == tables)
            #expect(headers.count == tables.count)
            let empty = headers.filter { header in !objects.contains { $0["table"] == header["table"] && $0["row"] != nil } }
            #expect(empty.compactMap { $0["table"]?.text } == ["NewSurveyGroupedListSubGroupedList"])
            let surveyHeader = try #require(headers.first { $0["table"] == .string("NewSurvey") })
            #expect((surveyHeader["columns"]?.array ?? []).contains { $0["name"] == .string("DateField") && $0["type"] == .string("date-time") })

            // The zip, read by Python: every table a CSV with a header and the same rows.
            let (zipStatus, _, zipHeaders) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/export.zip", token: root)
            #expect(zipStatus == .ok)
            #expect(zipHeaders[.contentType] == "application/zip")
            let archive = try await client.execute(
                uri: "/admin/v1/studies/SLEEPWELL/export.zip", method: .get, headers: [.authorization: "Bearer \(root)"]
            ) { Data(buffer: $0.body) }
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID()).zip")
            try archive.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let report = try Self.python(
                """
                import csv, io, json, sys, zipfile
                z = zipfile.ZipFile(sys.argv[1])
                assert z.testzip() is None
                out = {"csv": {}, "manifest": None, "last": z.namelist()[-1]}
                for name in z.namelist():
                    if name.endswith(".json"):
                        out["manifest"] = json.loads(z.read(name))
                    else:
                        out["csv"][name] = list(csv.reader(io.StringIO(z.read(name).decode("utf-8"), newline="")))
                print(json.dumps(out))
                """, file.path)
            let unzipped = try JSONDecoder().decode(JSONValue.self, from: Data(report.utf8))
            let csvFiles = try JSONDecoder().decode([String: [[String]]].self, from: JSONEncoder().encode(unzipped["csv"] ?? .null))
            // The manifest, last: every table's file, parent, rows and typed columns.
            #expect(unzipped["last"] == .string(StudyExport.manifestName))
            let described = unzipped["manifest"]?["tables"]?.array ?? []
            #expect(described.count == tables.count)
            let surveyEntry = try #require(described.first { $0["table"] == .string("NewSurvey") })
            #expect(surveyEntry["file"] == .string("NewSurvey.csv"))
            #expect(surveyEntry["rows"] == .number(2))
            #expect(described.first { $0["table"] == .string("NewSurveyGroupedListSubGroupedList") }?["rows"] == .number(0))
            #expect((surveyEntry["columns"]?.array ?? []).contains { $0["name"] == .string("IntegerField") && $0["type"] == .string("number") })
            #expect(Set(csvFiles.keys) == Set(tables.map { StudyExport.fileName($0) }))
            let sheet = try #require(csvFiles["NewSurvey.csv"])
            #expect(sheet.count == 3)
            let header = sheet[0]
            #expect(Array(header.prefix(3)) == ["Key", "ParticipantId", "Created"])
            let text = try #require(header.firstIndex(of: "ShortTextField"))
            #expect(sheet[2][text] == "'=HYPERLINK(\"x\"), line\nbreak")
            #expect(sheet[1][try #require(header.firstIndex(of: "BooleanField"))] == "true")

            var exported: [String] = []
            for try await format in try await postgres.query(
                "SELECT details->>'format' FROM audit_events WHERE action = 'responses.exported' ORDER BY id",
                logger: Logger(label: "test")
            ).decode(String.self) { exported.append(format) }
            #expect(exported == ["jsonl", "zip", "zip"])
        }
    }

    /// Runs a Python script with arguments and returns what it printed.
    static func python(_ script: String, _ arguments: String...) throws -> String {
        try ExternalTool.run(ProcessInfo.processInfo.environment["STUDYSTACK_TEST_PYTHON"] ?? "python3", ["-c", script] + arguments)
    }
}
