import Foundation
import HTTPTypes
import JSONText
import Logging
import PostgresNIO
import Testing
import TestSupport

/// Where the response service behaves as the original LabKey server did for the apps, end to end
/// with study-metadata live: the design fetched from it, the response stored in the study's table.
@Suite(.needsCluster) struct ResponseFidelityTests {
    let admin = ResponseAdmin()

    @Test func aResponseNamingItsActivityInAnotherCaseIsStoredInTheActivitysTable() async throws {
        try await admin.withServices(announce: false, beforeResponse: ResponseAdminTokenTests.launchSleepwell) {
            client, _, root, postgres in
            try await eventually("SLEEPWELL known to the response service", within: .seconds(20)) {
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: root).0
            } until: { $0 == .ok }
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            let now = "2026-11-25T08:00:00.000+0000"
            // The app's copy of the study spells the activity "DAILY"; the design says "daily".
            let (status, _, _) = try await h.call(
                "mobileappstudy-processResponse.api",
                json: [
                    "type": "SurveyResponse", "participantId": appToken,
                    "metadata": ["activityId": "DAILY", "version": "1.0", "activityRunId": "1"],
                    "data": ["startTime": now, "endTime": now, "results": [
                        ["key": "sleepQuality", "resultType": "scale", "value": 7, "skipped": false, "startTime": now, "endTime": now],
                    ]],
                ])
            #expect(status == .ok)
            let processing = ProcessingFixture()
            let (outcome, error) = try await processing.settled(h, try await processing.latest(h))
            #expect(outcome == "processed", "\(error ?? "")")
            var stored: [Double?] = []
            for try await value in try await postgres.query(
                #"SELECT "sleepQuality" FROM "study_SLEEPWELL"."daily""#, logger: Logger(label: "test")
            ).decode(Double?.self) { stored.append(value) }
            #expect(stored == [7])
        }
    }

    /// A date-only answer is midnight of its day wherever it was given: the apps send it at the
    /// device's offset, and it reads back unchanged in participant queries (in the configured
    /// query time zone it would be the previous evening for two of these three), while
    /// researchers see the offset too (the LabKey API, the export).
    @Test func aDateOnlyAnswerReadsBackUnchangedFromEveryTimeZone() async throws {
        try await admin.withServices(announce: false, live: true, beforeResponse: ResponseAdminTokenTests.launchSleepwell) {
            client, metadata, root, postgres in
            try await eventually("SLEEPWELL known to the response service", within: .seconds(20)) {
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: root).0
            } until: { $0 == .ok }
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            // New York, Tokyo, and the date alone (as older apps sent it).
            let answers = ["2017-02-13T00:00:00.000-0500", "2017-02-13T00:00:00.000+0900", "2017-02-13"]
            var tokens: [String] = []
            for answer in answers {
                let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
                let appToken = try #require(enrolled["data"]?["appToken"]?.text)
                tokens.append(appToken)
                let (status, _, _) = try await h.call(
                    "mobileappstudy-processResponse.api",
                    json: [
                        "type": "SurveyResponse", "participantId": appToken,
                        "metadata": ["activityId": "baseline", "version": "1.0", "activityRunId": "1"] as [String: Any],
                        "data": ["results": [["key": "diagnosisDate", "resultType": "date", "value": answer, "skipped": false]]]
                            as [String: Any],
                    ])
                #expect(status == .ok)
                let processing = ProcessingFixture()
                let (outcome, error) = try await processing.settled(h, try await processing.latest(h))
                try #require(outcome == "processed", "\(error ?? "")")
            }

            // Each participant's own query, both calls, and a filter on the day.
            for token in tokens {
                let (_, sql, _) = try await h.call(
                    "mobileappstudy-executeSQL.api", query: ["participantId": token, "sql": "SELECT diagnosisDate FROM baseline"],
                    method: .get)
                #expect(sql["rows"]?.array?.first?["data"]?["diagnosisDate"]?["value"] == .string("2017-02-13 00:00:00.000"), "\(sql)")
                let (_, rows, _) = try await h.call(
                    "mobileappstudy-selectRows.api",
                    query: ["participantId": token, "queryName": "baseline", "query.diagnosisDate~dateeq": "2017-02-13"], method: .get)
                #expect(rows["rowCount"] == .number(1), "\(rows)")
                #expect(rows["rows"]?.array?.first?["diagnosisDate"] == .string("2017-02-13 00:00:00.000"))
            }

            // Researchers: the wall clock with its offset, in the LabKey API and the export.
            let helper = MetadataAdmin()
            let (_, created) = try await helper.send(metadata, .post, "/admin/v1/api-keys", token: root, body: #"{"name": "dates"}"#)
            let key = try #require(try JSONDecoder().decode(JSONValue.self, from: Data(buffer: created))["key"]?.text)
            let (_, reply) = try await client.execute(
                uri: "/SLEEPWELL/query-executeSql.api?schemaName=lists&sql=SELECT%20diagnosisDate%20FROM%20baseline%20ORDER%20BY%20Key",
                method: .get, headers: [HTTPField.Name("apikey")!: key]
            ) { ($0.status, try JSONDecoder().decode(JSONValue.self, from: Data(buffer: $0.body))) }
            let dates = reply["rows"]?.array?.compactMap { $0["diagnosisDate"]?.text }
            #expect(dates == ["2017/02/13 00:00:00.000 -0500", "2017/02/13 00:00:00.000 +0900", "2017/02/13 00:00:00.000 +0000"], "\(reply)")
            #expect(reply["metaData"]?["fields"]?.array?.first?["jsonType"] == .string("date"))
            let (_, export, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/export.jsonl", token: root)
            let exported = export.split(separator: "\n").compactMap { line -> String? in
                let value = try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
                return value?["table"] == .string("baseline") ? value?["row"]?["diagnosisDate"]?.text : nil
            }
            #expect(exported == ["2017-02-13T00:00:00.000-05:00", "2017-02-13T00:00:00.000+09:00", "2017-02-13T00:00:00.000+00:00"])
        }
    }

    /// SLEEPWELL with `daily`'s version label set (nil: numbered), and `mood`'s title changed when
    /// `changed` (a different design).
    static func sleepwell(dailyLabel: String?, changed: Bool = false) throws -> String {
        let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
        var object = try JSONSerialization.jsonObject(with: Data(example.utf8)) as! [String: Any]
        var activities = object["activities"] as! [[String: Any]]
        activities[0]["versionLabel"] = dailyLabel
        if changed {
            var steps = activities[0]["steps"] as! [[String: Any]]
            steps[1]["title"] = "How well did you sleep last night?"
            activities[0]["steps"] = steps
        }
        object["activities"] = activities
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// A study moved from another deployment keeps its activity versions: responses carrying the
    /// label given to the design are processed; the same design published again under a new
    /// label serves both; a label names one design.
    @Test func aMigratedStudyKeepsItsActivityVersionLabels() async throws {
        let helper = MetadataAdmin()
        try await admin.withServices(announce: false, beforeResponse: { metadata, root in
            _ = try await MetadataAdmin().send(metadata, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            _ = try await MetadataAdmin().send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: try Self.sleepwell(dailyLabel: "3"))
            #expect(try await MetadataAdmin().send(metadata, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
        }) { client, metadata, root, postgres in
            try await eventually("SLEEPWELL known to the response service", within: .seconds(20)) {
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: root).0
            } until: { $0 == .ok }
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            func submit(_ version: String, run: Int) async throws -> (String, String?) {
                let (status, _, _) = try await h.call(
                    "mobileappstudy-processResponse.api",
                    json: [
                        "type": "SurveyResponse", "participantId": appToken,
                        "metadata": ["activityId": "daily", "version": version, "activityRunId": String(run)] as [String: Any],
                        "data": ["results": [["key": "sleepQuality", "resultType": "scale", "value": run, "skipped": false]]]
                            as [String: Any],
                    ])
                #expect(status == .ok)
                let processing = ProcessingFixture()
                return try await processing.settled(h, try await processing.latest(h))
            }
            let first = try await submit("3", run: 1)
            #expect(first.0 == "processed", "\(first.1 ?? "")")
            // A label nobody published fails the response with the design-not-found error, as in the original.
            let unknown = try await submit("1.0", run: 2)
            #expect(unknown.0 == "error" && unknown.1?.contains("No published design of activity 'daily' at version '1.0'") == true,
                    "\(unknown)")

            // The same design under a new label: a new version, and both labels are served.
            #expect(try await helper.send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: try Self.sleepwell(dailyLabel: "3.1")).0 == .ok)
            let (republished, body) = try await helper.send(metadata, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root)
            #expect(republished == .ok, "\(String(buffer: body))")
            for (run, version) in [(3, "3.1"), (4, "3")] {
                let outcome = try await submit(version, run: run)
                #expect(outcome.0 == "processed", "\(version): \(outcome.1 ?? "")")
            }
            let (_, versions) = try await helper.send(metadata, .get, "/admin/v1/studies/SLEEPWELL/versions", token: root)
            let listed = try JSONDecoder().decode(JSONValue.self, from: Data(buffer: versions))["versions"]?.array
            #expect(listed?.map { $0["activityVersions"]?["daily"] } == [.number(1), .number(2)])

            // A changed design under a label already used is refused, and nothing is published.
            #expect(try await helper.send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root,
                body: try Self.sleepwell(dailyLabel: "3", changed: true)).0 == .ok)
            let (refused, refusal) = try await helper.send(metadata, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root)
            #expect(refused == .unprocessableContent)
            let problem = try JSONDecoder().decode(JSONValue.self, from: Data(buffer: refusal))["error"]?["problems"]?.array?.first
            #expect(problem?["pointer"] == .string("/activities/0/versionLabel"), "\(String(buffer: refusal))")
            #expect(problem?["message"]?.text?.hasPrefix("version 3 of daily was published with another design") == true)
            let (_, after) = try await helper.send(metadata, .get, "/admin/v1/studies/SLEEPWELL/versions", token: root)
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(buffer: after))["versions"]?.array?.count == 2)

            // An import gives the label in the query; a malformed one is refused.
            let design = try String(contentsOf: ProcessingFixture.file("NewSurvey", "3"), encoding: .utf8)
            let (imported, importedBody) = try await helper.send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/draft/activities/NewSurvey?version=3", token: root, body: design)
            #expect(imported == .created)
            #expect(try JSONDecoder().decode(JSONValue.self, from: Data(buffer: importedBody))["activity"]?["versionLabel"] == .string("3"))
            #expect(try await helper.send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/draft/activities/NewSurvey?version=a%20b", token: root, body: design).0
                == .unprocessableContent)
        }
    }
}
