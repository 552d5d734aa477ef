import Foundation
import InternalContracts
import HTTPTypes
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The weeks registration counts reach the response service's `RunAdherence` table through
/// registration's outbox: researchers read them with the LabKey client and in the exports.
@Suite(.needsCluster) struct RunAdherenceTableTests {
    /// A researcher's script: an API key made with the admin's session, then the table read with
    /// the `labkey` client, filtered and summed.
    static let script = """
        import json, sys, urllib.request
        from labkey.api_wrapper import APIWrapper
        from labkey.query import QueryFilter
        metadata, token, domain, container = sys.argv[1:5]
        request = urllib.request.Request(metadata + "/admin/v1/api-keys", data=b'{"name": "adherence"}', method="POST",
                                         headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        key = json.load(urllib.request.urlopen(request))["key"]
        api = APIWrapper(domain, container, use_ssl=False, api_key=key)
        out = {}
        out["first"] = api.query.select_rows(
            "lists", "RunAdherence", columns="ActivityId,Week,RunsOpened,RunsCompleted,RunsMissed,RunsExpired",
            filter_array=[QueryFilter("ActivityId", "daily")], sort="Week", max_rows=1)
        out["sums"] = api.query.execute_sql(
            "lists", "SELECT ActivityId, sum(RunsCompleted) AS done FROM RunAdherence GROUP BY ActivityId ORDER BY ActivityId")
        print(json.dumps(out))
        """

    static func rows(_ response: ResponseHarness, _ query: String) async throws -> [String] {
        try await response.postgres.query(PostgresQuery(unsafeSQL: query), logger: Logger(label: "test")).collect().map { try $0.decode(String.self) }
    }

    @Test func theCountedWeeksAreATableTheLabKeyClientAndTheExportsRead() async throws {
        try await ParticipantRunsTests.withServicesAndMetadata { h, response, team, metadataURL in
            let appToken = try await ParticipantRunsTests.enrolSam(h, response).appToken
            try await ParticipantRunsTests.submit(response, appToken: appToken, activity: "daily", run: "2", endTime: "2026-03-20T21:00:00.000+1100")

            // Counted with the response, every week of Sam's reaches the response service.
            let table = #""study_SLEEPWELL"."RunAdherence""#
            // (The table is made with the first week that arrives.)
            let first = try await eventually("Sam's first week of check-ins in RunAdherence", within: .seconds(30)) {
                try? await Self.rows(response, """
                    SELECT concat_ws(' ', to_char("Week" AT TIME ZONE 'UTC', 'YYYY-MM-DD'), "RunsOpened", "RunsCompleted", "RunsMissed",
                                     "RunsExpired")
                    FROM \(table) WHERE "ActivityId" = 'daily' ORDER BY "Week" LIMIT 1
                    """)
            } until: { $0 == ["2026-03-16 6 1 5 0"] }
            #expect(first?.count == 1)
            let registered = try await h.count("SELECT count(*)::int FROM participant_run_weeks")
            #expect(registered > 30, "a week per activity since March")
            try await eventually("as many weeks there as registration counted", within: .seconds(30)) {
                try await Self.rows(response, "SELECT count(*)::text FROM \(table)")
            } until: { $0 == [String(registered)] }
            // Under the participant's number in the study, as every table of theirs.
            let numbers = try await Self.rows(response, "SELECT DISTINCT \"ParticipantId\"::text FROM \(table)")
            #expect(numbers == (try await Self.rows(response, "SELECT number::text FROM participants")))

            // A researcher's script reads it with the labkey client.
            let output = try await ExternalTool.runOffPool(
                ProcessInfo.processInfo.environment["STUDYSTACK_TEST_PYTHON"] ?? "python3",
                ["-c", Self.script, metadataURL, team.root, "127.0.0.1:\(try #require(response.client.port))", "DEMOORG/DEMOAPP/SLEEPWELL"])
            let out = try JSONDecoder().decode(JSONValue.self, from: Data(output.utf8))
            let row = try #require(out["first"]?["rows"]?.array?.first)
            #expect(row["ActivityId"] == .string("daily"))
            #expect(row["Week"]?.text?.hasPrefix("2026/03/16") == true, "\(row)")
            #expect([row["RunsOpened"], row["RunsCompleted"], row["RunsMissed"]] == [.number(6), .number(1), .number(5)])
            let sums = try #require(out["sums"]?["rows"]?.array)
            #expect(sums.first { $0["ActivityId"] == .string("daily") }?["done"] == .number(1), "\(sums)")

            // The export carries it too.
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(team.root)"
            let export = try await response.client.execute(uri: "/admin/v1/studies/SLEEPWELL/export.jsonl", method: .get, headers: headers) {
                String(buffer: $0.body)
            }
            let lines = export.split(separator: "\n").filter { $0.contains(#""table":"RunAdherence""#) }
            #expect(lines.count == registered + 1, "its columns' line and a line per week")
        }
    }

    @Test func onlyRegistrationSendsWeeksAndOnlyWellFormedAndNewerOnesChangeThem() async throws {
        try await ParticipantRunsTests.withServices { _, response, _ in
            let (_, enrolled, _) = try await response.call(
                "mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let hash = SecureToken.hash(try #require(enrolled["data"]?["appToken"]?.text))
            let path = try InternalCalls.runWeeks.path(["studyId": "SLEEPWELL"])
            func send(_ object: [String: Any], as caller: ServiceName = .registration) async throws -> (HTTPResponse.Status, JSONValue) {
                let body = Array(try JSONSerialization.data(withJSONObject: object))
                var headers = TestApplication.signedHeaders(caller: caller, to: .response, method: .put, path: path, body: body)
                headers[.contentType] = "application/json"
                return try await response.client.execute(uri: path, method: .put, headers: headers, body: ByteBuffer(bytes: body)) {
                    ($0.status, (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: $0.body))) ?? .null)
                }
            }
            func update(counted: String, opened: Int = 2, week: String = "2026-03-16", hash: String = hash) -> [String: Any] {
                ["participantTokenSHA256": hash, "countedAt": counted,
                 "weeks": [["activityId": "daily", "week": week, "opened": opened, "completed": 1, "missed": 1, "expired": 0]]]
            }
            #expect(try await send(update(counted: "2026-11-01T00:00:00.000Z"), as: .studyMetadata).0 == .forbidden)
            for bad in [
                update(counted: "2026-11-01T00:00:00.000Z", opened: -1), update(counted: "2026-11-01T00:00:00.000Z", week: "2026-02-30"),
                update(counted: "2026-11-01T00:00:00.000Z", hash: String(repeating: "Z", count: 64)), ["weeks": "none"],
            ] {
                #expect(try await send(bad).0 == .badRequest)
            }
            // A participant the study does not have: nothing (and no table made for them).
            #expect(try await send(update(counted: "2026-11-01T00:00:00.000Z", hash: String(repeating: "ab", count: 32))).1["changed"] == .number(0))
            // Written, then an update counted earlier (delivered late) changes nothing, a later one does.
            #expect(try await send(update(counted: "2026-11-02T00:00:00.000Z")).1["changed"] == .number(1))
            #expect(try await send(update(counted: "2026-11-01T00:00:00.000Z", opened: 9)).1["changed"] == .number(0))
            #expect(try await send(update(counted: "2026-11-03T00:00:00.000Z", opened: 3)).1["changed"] == .number(1))
            #expect(try await Self.rows(response, #"SELECT "RunsOpened"::text FROM "study_SLEEPWELL"."RunAdherence""#) == ["3"])
            // A week counted as nothing goes.
            #expect(try await send(update(counted: "2026-11-04T00:00:00.000Z", opened: 0)
                .merging(["weeks": [["activityId": "daily", "week": "2026-03-16", "opened": 0, "completed": 0, "missed": 0, "expired": 0]]]) { $1 }
            ).1["changed"] == .number(1))
            #expect(try await Self.rows(response, #"SELECT count(*)::text FROM "study_SLEEPWELL"."RunAdherence""#) == ["0"])
        }
    }
}
