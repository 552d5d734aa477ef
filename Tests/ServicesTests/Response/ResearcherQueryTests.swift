import Foundation
import HummingbirdTesting
import JSONText
import Logging
import Testing
import TestSupport

/// A researcher's script reading a study through the LabKey query API with LabKey's own Python
/// client (`labkey` from PyPI, in the test tools' environment): rows with filters, sorts and
/// column lists in each format version, SQL joining a parent and a child table, the listings, and
/// only ever the study its key's admin holds a role on.
@Suite(.needsCluster) struct ResearcherQueryTests {
    let admin = ResponseAdmin()
    let metadataHelper = MetadataAdmin()

    /// SLEEPWELL and OTHERSTUDY, both from the example design.
    @Sendable static func launchTwoStudies(_ metadata: any TestClientProtocol, _ root: String) async throws {
        try await ResponseAdminTokenTests.launchSleepwell(metadata, root)
        let other = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            .replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "OTHERSTUDY""#)
        let helper = MetadataAdmin()
        _ = try await helper.send(metadata, .put, "/admin/v1/studies/OTHERSTUDY/draft", token: root, body: other)
        #expect(try await helper.send(metadata, .post, "/admin/v1/studies/OTHERSTUDY/launch", token: root).0 == .ok)
    }

    /// A participant of `study` with one daily check-in per entry of `checkIns` (sleep quality,
    /// the activities chosen), each processed before the next.
    func participant(_ h: ResponseHarness, study: String, checkIns: [(Double, [String])]) async throws {
        let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": study, "allowDataSharing": "true"])
        let appToken = try #require(enrolled["data"]?["appToken"]?.text)
        let now = "2026-11-25T08:00:00.000+0000"
        for (run, (sleep, activities)) in checkIns.enumerated() {
            let (status, _, _) = try await h.call(
                "mobileappstudy-processResponse.api",
                json: [
                    "type": "SurveyResponse", "participantId": appToken,
                    "metadata": ["activityId": "daily", "version": "1.0", "activityRunId": String(run + 1)] as [String: Any],
                    "data": [
                        "startTime": now, "endTime": now,
                        "results": [
                            ["key": "sleepQuality", "resultType": "scale", "value": sleep, "skipped": false] as [String: Any],
                            ["key": "activities", "resultType": "textChoice", "skipped": false, "value": activities] as [String: Any],
                            ["key": "notes", "resultType": "text", "value": "night \(run + 1)", "skipped": false] as [String: Any],
                        ],
                    ] as [String: Any],
                ])
            #expect(status == .ok)
            let processing = ProcessingFixture()
            let (outcome, error) = try await processing.settled(h, try await processing.latest(h))
            try #require(outcome == "processed", "\(error ?? "")")
        }
    }

    /// What a researcher's script does, each call's reply (or its error's status and message).
    static let script = """
        import json, sys
        from labkey.api_wrapper import APIWrapper
        from labkey.query import QueryFilter
        from labkey.exceptions import RequestError
        domain, key, container = sys.argv[1:4]
        api = APIWrapper(domain, container, use_ssl=False, api_key=key)
        context = api.server_context

        def attempt(call):
            try:
                return call()
            except RequestError as error:
                inner = getattr(error, "exception", None) or error
                response = getattr(inner, "response", None)
                return {"status": response.status_code if response is not None else None,
                        "exception": (getattr(inner, "server_exception", None) or {}).get("exception")}

        def raw(action, payload):
            return attempt(lambda: context.make_request(context.build_url("query", action), payload))

        out = {}
        out["filtered"] = attempt(lambda: api.query.select_rows(
            "lists", "daily", columns="Key,sleepQuality,notes", sort="-sleepQuality",
            filter_array=[QueryFilter("sleepQuality", 5, QueryFilter.Types.GREATER_THAN_OR_EQUAL),
                          QueryFilter("notes", "night", QueryFilter.Types.STARTS_WITH)]))
        out["paged"] = attempt(lambda: api.query.select_rows(
            "lists", "daily", columns="sleepQuality", sort="sleepQuality", max_rows=2, offset=1))
        out["pastTheEnd"] = attempt(lambda: api.query.select_rows("lists", "daily", columns="Key", offset=10))
        out["fullPage"] = attempt(lambda: api.query.select_rows(
            "lists", "daily", columns="sleepQuality", sort="sleepQuality", max_rows=2))
        out["lastPage"] = attempt(lambda: api.query.select_rows(
            "lists", "daily", columns="sleepQuality", sort="sleepQuality", max_rows=5, offset=2))
        out["in"] = attempt(lambda: api.query.select_rows(
            "lists", "dailyactivities", columns="activities",
            filter_array=[QueryFilter("activities", "read;screens", QueryFilter.Types.IN)]))
        out["v91"] = attempt(lambda: api.query.select_rows(
            "lists", "daily", columns="sleepQuality", sort="sleepQuality", max_rows=1, required_version=9.1))
        out["v171"] = attempt(lambda: api.query.select_rows(
            "lists", "daily", columns="sleepQuality", sort="sleepQuality", max_rows=1, required_version=17.1))
        out["join"] = attempt(lambda: api.query.execute_sql("lists", (
            "SELECT d.sleepQuality, a.activities FROM daily d JOIN dailyactivities a ON a.dailyId = d.Key "
            "WHERE a.activities = 'read' ORDER BY d.sleepQuality")))
        out["participants"] = attempt(lambda: api.query.execute_sql(
            "mobileappstudy", "SELECT p.ParticipantId, count(r.RowId) AS responses FROM Participant p "
            "LEFT JOIN Response r ON r.ParticipantId = p.ParticipantId GROUP BY p.ParticipantId ORDER BY 2"))
        out["responses"] = attempt(lambda: api.query.select_rows("mobileappstudy", "Response", columns="ActivityId,Status"))
        out["metadata"] = attempt(lambda: api.query.select_rows(
            "mobileappstudy", "ResponseMetadata", columns="FieldName,Skipped",
            filter_array=[QueryFilter("FieldName", "sleepQuality")]))
        out["badSQL"] = attempt(lambda: api.query.execute_sql("lists", "SELECT nothing FROM daily"))
        out["otherSchema"] = attempt(lambda: api.query.execute_sql("lists", "SELECT * FROM public.participants"))
        out["noQuery"] = attempt(lambda: api.query.select_rows("lists", "nosuchlist"))
        out["noSchema"] = attempt(lambda: api.query.select_rows("core", "Users"))
        out["badFilter"] = attempt(lambda: api.query.select_rows(
            "lists", "daily", filter_array=[QueryFilter("sleepQuality", "x", "nosuchoperator")]))
        out["schemas"] = raw("getSchemas.api", {})
        out["queries"] = raw("getQueries.api", {"schemaName": "lists"})
        out["details"] = raw("getQueryDetails.api", {"schemaName": "lists", "queryName": "dailyactivities"})
        print(json.dumps(out))
        """

    func run(port: Int, key: String, container: String) async throws -> JSONValue {
        let output = try await ExternalTool.runOffPool(
            ProcessInfo.processInfo.environment["STUDYSTACK_TEST_PYTHON"] ?? "python3",
            ["-c", Self.script, "127.0.0.1:\(port)", key, container])
        return try JSONDecoder().decode(JSONValue.self, from: Data(output.utf8))
    }

    @Test func aResearchersScriptReadsTheirStudyWithTheLabKeyClient() async throws {
        try await admin.withServices(announce: false, live: true, beforeResponse: Self.launchTwoStudies) {
            client, metadata, root, postgres in
            for study in ["SLEEPWELL", "OTHERSTUDY"] {
                try await eventually("\(study) known to the response service", within: .seconds(20)) {
                    try await admin.send(client, .get, "/admin/v1/studies/\(study)/token-batches", token: root).0
                } until: { $0 == .ok }
            }
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            try await participant(h, study: "SLEEPWELL", checkIns: [(7, ["read", "screens"]), (4, ["nothing"])])
            try await participant(h, study: "SLEEPWELL", checkIns: [(9, ["read"])])
            try await participant(h, study: "OTHERSTUDY", checkIns: [(8, ["read"]), (6, ["read"]), (5, ["screens"])])

            let port = try #require(client.port)
            let (adminId, researcher) = try await metadataHelper.makeAdmin(metadata, root: root, email: "researcher@studystack.test")
            #expect(try await metadataHelper.send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/roles/\(adminId)", token: root, body: #"{"role": "viewer"}"#).0 == .ok)
            let (_, createdBody) = try await metadataHelper.send(metadata, .post, "/admin/v1/api-keys", token: researcher, body: #"{"name": "r"}"#)
            let key = try #require(try JSONDecoder().decode(JSONValue.self, from: Data(buffer: createdBody))["key"]?.text)

            let out = try await run(port: port, key: key, container: "DEMOORG/DEMOAPP/SLEEPWELL")

            // Filters (>= and starts-with), a sort and a column list; only SLEEPWELL's rows.
            let filtered = try #require(out["filtered"])
            #expect(filtered["rowCount"] == .number(2), "\(filtered)")
            let rows = try #require(filtered["rows"]?.array)
            try #require(rows.count == 2)
            #expect(rows.map { $0["sleepQuality"] } == [.number(9), .number(7)])
            #expect(rows[0].object.map { Set($0.keys) } == ["Key", "sleepQuality", "notes"])
            #expect(filtered["formatVersion"] == .number(8.3))
            let fields = try #require(filtered["metaData"]?["fields"]?.array)
            try #require(fields.count == 3)
            #expect(fields.map { $0["name"] } == [.string("Key"), .string("sleepQuality"), .string("notes")])
            #expect(fields.map { $0["jsonType"] } == [.string("int"), .string("float"), .string("string")])
            #expect(filtered["metaData"]?["id"] == .string("Key"))

            // Paging: the total before maxRows and offset.
            let paged = try #require(out["paged"])
            #expect(paged["rowCount"] == .number(3), "\(paged)")
            #expect(paged["rows"]?.array?.map { $0["sleepQuality"] } == [.number(7), .number(9)])
            #expect(out["in"]?["rows"]?.array?.count == 3, "\(out["in"] ?? .null)")
            // Past the last row: no rows, and still the total.
            #expect(out["pastTheEnd"]?["rows"]?.array?.count == 0)
            #expect(out["pastTheEnd"]?["rowCount"] == .number(3), "\(out["pastTheEnd"] ?? .null)")
            // A page as long as its limit is counted; one that stops short after a row ends there.
            #expect(out["fullPage"]?["rows"]?.array?.count == 2)
            #expect(out["fullPage"]?["rowCount"] == .number(3), "\(out["fullPage"] ?? .null)")
            #expect(out["lastPage"]?["rows"]?.array?.map { $0["sleepQuality"] } == [.number(9)])
            #expect(out["lastPage"]?["rowCount"] == .number(3), "\(out["lastPage"] ?? .null)")

            // The format versions' row shapes.
            #expect(out["v91"]?["rows"]?.array?.first?["sleepQuality"] == .object(["value": .number(4)]), "\(out["v91"] ?? .null)")
            #expect(out["v171"]?["rows"]?.array?.first?["data"]?["sleepQuality"] == .object(["value": .number(4)]))
            #expect(out["v171"]?["formatVersion"] == .number(17.1))

            // SQL joining a parent and its child table, sent WAF-encoded as the client does.
            let join = try #require(out["join"])
            let joined = try #require(join["rows"]?.array, "\(join)")
            try #require(joined.count == 2)
            #expect(joined.map { $0["sleepQuality"] } == [.number(7), .number(9)])
            #expect(joined.map { $0["activities"] } == [.string("read"), .string("read")])

            // mobileappstudy: this study's two participants and three responses, nothing of OTHERSTUDY's.
            let participants = try #require(out["participants"]?["rows"]?.array, "\(out["participants"] ?? .null)")
            try #require(participants.count == 2)
            #expect(participants.map { $0["responses"] } == [.number(1), .number(2)])
            let responses = try #require(out["responses"]?["rows"]?.array)
            try #require(responses.count == 3)
            #expect(responses.allSatisfy { $0["Status"] == .string("processed") && $0["ActivityId"] == .string("daily") })
            #expect(out["metadata"]?["rows"]?.array?.count == 3, "\(out["metadata"] ?? .null)")

            // Errors in LabKey's envelope, with LabKey's statuses.
            #expect(out["badSQL"]?["status"] == .number(400))
            #expect(out["badSQL"]?["exception"] == .string("Column 'nothing' not found."))
            #expect(out["otherSchema"]?["status"] == .number(400), "\(out["otherSchema"] ?? .null)")
            #expect(out["noQuery"]?["status"] == .number(404))
            #expect(out["noQuery"]?["exception"] == .string("Query 'nosuchlist' in schema 'lists' doesn't exist."))
            #expect(out["noSchema"]?["status"] == .number(404))
            #expect(out["badFilter"]?["status"] == .number(400))

            // The listings.
            #expect(out["schemas"]?["schemas"] == .array([.string("lists"), .string("mobileappstudy")]))
            let queries = try #require(out["queries"]?["queries"]?.array)
            #expect(queries.compactMap { $0["name"]?.text }.contains("dailyactivities") == true, "\(queries)")
            let details = try #require(out["details"]?["columns"]?.array)
            let parentColumn = try #require(details.first { $0["name"] == .string("dailyId") }, "\(details)")
            #expect(parentColumn["lookup"]?["queryName"] == .string("daily"))

            // A key of an admin with a role on SLEEPWELL reads nothing of OTHERSTUDY.
            let refused = try await run(port: port, key: key, container: "OTHERSTUDY")
            #expect(refused["filtered"]?["status"] == .number(403))
            #expect(refused["join"]?["status"] == .number(403))
            #expect(refused["schemas"]?["status"] == .number(403))
        }
    }
}
