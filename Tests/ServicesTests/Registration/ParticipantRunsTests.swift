import Foundation
import StudyModels
import Testing
import TestSupport

/// `GET /admin/v1/studies/{studyId}/participants/{participantId}/runs`: a participant's runs from
/// the published schedule, in their zone, with states from the completions their app reported and
/// the responses that reached the response service.
@Suite struct ParticipantRunsTests {
    /// The example study in Melbourne, with a daily activity at 08:00 and 20:00 from March 2026 to June
    /// 2027 and a weekly one for four weeks from enrolment, at 09:00.
    static func melbourneStudy(_ studyId: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(try ExampleStudy().document(studyId: studyId).utf8)) as? [String: Any])
        object["timeZone"] = "Australia/Melbourne"
        var activities = try #require(object["activities"] as? [[String: Any]])
        for index in activities.indices {
            switch activities[index]["activityId"] as? String {
            case "daily":
                activities[index]["schedule"] = ["frequency": "daily", "startDate": "2026-03-01", "endDate": "2027-06-30", "dailyTimes": ["08:00", "20:00"]]
            case "weekly":
                activities[index]["schedule"] = [
                    "frequency": "weekly", "anchor": ["source": "enrollmentDate"], "startDays": 0, "repeatCount": 4, "time": "09:00",
                ]
            default: break
            }
        }
        object["activities"] = activities
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    struct Listed: Equatable, CustomStringConvertible {
        var runId: Int, start: String, end: String?, state: String, completedBy: [String]
        var description: String { "\(runId) \(start) \(end ?? "open") \(state) \(completedBy)" }
    }

    func fetch(_ h: RegistrationHarness, _ participant: String, _ query: String, token: String) async throws
        -> (ParticipantRunsReply, [String: [Listed]])
    {
        let reply = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(participant)/runs\(query)", token: token)
        try #require(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
        let decoded = try JSONDecoder().decode(ParticipantRunsReply.self, from: reply.body)
        let grouped = Dictionary(grouping: decoded.runs, by: \.activityId).mapValues { runs in
            runs.map { Listed(runId: $0.runId, start: $0.start, end: $0.end, state: $0.state, completedBy: $0.completedBy) }
        }
        return (decoded, grouped)
    }

    /// Study-metadata with the Melbourne study, the response service on a real port, and
    /// registration calling both.
    static func withServices(
        _ body: @escaping @Sendable (RegistrationHarness, ResponseHarness, StudyMetadataFixture.Team) async throws -> Void
    ) async throws {
        try await StudyMetadataFixture.run(studies: ["SLEEPWELL"], team: true, document: { try Self.melbourneStudy($0) }) { metadataURL, team in
            let team = try #require(team)
            try await ResponseHarness.run(overrides: ["studyMetadata.url": metadataURL], live: true) { response in
                #expect(try await response.studyEvent("SLEEPWELL", version: 99) == .ok)
                try await RegistrationHarness.run(
                    overrides: ["studyMetadata.url": metadataURL, "response.url": "http://127.0.0.1:\(response.client.port!)"]
                ) { registration in
                    try await body(registration, response, team)
                }
            }
        }
    }

    /// A response as the app posts it, naming `run` (or no run), finished at `endTime` as the app
    /// writes it (with its offset).
    static func submit(_ response: ResponseHarness, appToken: String, activity: String, run: String?, endTime: String) async throws {
        var metadata: [String: Any] = ["activityId": activity, "version": "1.0"]
        if let run { metadata["activityRunId"] = run }
        let (status, body, _) = try await response.call(
            "mobileappstudy-processResponse.api",
            json: ["type": "SurveyResponse", "participantId": appToken, "metadata": metadata,
                   "data": ["startTime": endTime, "endTime": endTime, "results": [] as [Any]]])
        #expect(status == .ok, "\(body)")
    }

    @Test func aMelbourneParticipantsRunsAcrossTheEndOfSummerTime() async throws {
        try await Self.withServices { h, response, team in
            let sam = try await h.signUp("sam@example.org")
            let (_, enrolled, _) = try await response.call(
                "mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            try await h.join("SLEEPWELL", auth: sam.auth, userId: sam.userId, token: appToken)
            // Sam enrolled on 2026-03-20 at 10:00 in Melbourne, on an iPhone.
            try await h.sql("UPDATE participant_studies SET enrolled_at = '2026-03-20T10:00:00+11:00' WHERE study_id = 'SLEEPWELL'")
            try await h.sql("UPDATE participant_sessions SET device_os = 'ios'")
            // The app reports daily run 2 completed (one activity in the call: the merged write),
            // then weekly run 1 completed and daily run 4 started (two in one call: the upsert).
            for items in [[("daily", "2", "completed")], [("weekly", "1", "completed"), ("daily", "4", "inProgress")]] {
                let update: [String: Any] = ["studyId": "SLEEPWELL", "activity": items.map { activity, run, state in
                    ["activityId": activity, "activityRunId": run, "activityState": state, "activityVersion": "1.0"]
                }]
                #expect(try await h.call("updateActivityState", body: update, auth: sam.auth, userId: sam.userId).status == .ok)
            }
            // Responses arrive for daily run 2 (both sources then), run 3, and one naming no run,
            // finished at 20:15 on the 22nd: the evening window, run 6.
            try await Self.submit(response, appToken: appToken, activity: "daily", run: "2", endTime: "2026-03-20T21:00:00.000+1100")
            try await Self.submit(response, appToken: appToken, activity: "daily", run: "3", endTime: "2026-03-21T08:30:00.000+1100")
            try await Self.submit(response, appToken: appToken, activity: "daily", run: nil, endTime: "2026-03-22T20:15:00.000+1100")
            let listed = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants", token: team.root)
            let participant = try #require(try JSONDecoder.iso8601.decode(ParticipantList.self, from: listed.body).participants.first?.participantId)

            let (reply, runs) = try await fetch(h, participant, "?from=2026-03-20T00:00:00%2B11:00&to=2026-04-10T00:00:00%2B10:00", token: team.viewer)
            // The offsets Sam's app wrote (+11:00 in March) fit the study's zone.
            #expect(reply.timeZone == "Australia/Melbourne" && reply.timeZoneSource == "inferred")
            #expect(reply.from == "2026-03-20T00:00:00+11:00" && reply.to == "2026-04-10T00:00:00+10:00")
            // Daily: 21 days of two windows from the one open when Sam joined (run 1, 08:00) to
            // 2026-04-09; the windows stay at 08:00 and 20:00 on the wall clock after 5 April.
            let daily = try #require(runs["daily"])
            try #require(daily.count == 42)
            #expect(daily.map(\.runId) == Array(1...42))
            #expect(daily[0] == Listed(runId: 1, start: "2026-03-20T08:00:00+11:00", end: "2026-03-20T19:59:59+11:00", state: "missed", completedBy: []))
            #expect(daily[1] == Listed(
                runId: 2, start: "2026-03-20T20:00:00+11:00", end: "2026-03-20T23:59:59+11:00", state: "completed", completedBy: ["app", "response"]))
            #expect(daily[2].completedBy == ["response"] && daily[5].completedBy == ["response"])
            #expect(daily[3].state == "missed", "started, not completed")
            #expect(daily.first { $0.start.hasPrefix("2026-04-05T08:00") }?.end == "2026-04-05T19:59:59+10:00")
            #expect(daily.filter { $0.state == "completed" }.map(\.runId) == [2, 3, 6])
            #expect(daily.filter { $0.state == "missed" }.count == 39)
            // Weekly from the enrolment day at 09:00; the fourth starts after `to`.
            #expect(runs["weekly"] == [
                Listed(runId: 1, start: "2026-03-20T09:00:00+11:00", end: "2026-03-27T08:59:59+11:00", state: "completed", completedBy: ["app"]),
                Listed(runId: 2, start: "2026-03-27T09:00:00+11:00", end: "2026-04-03T08:59:59+11:00", state: "missed", completedBy: []),
                Listed(runId: 3, start: "2026-04-03T09:00:00+11:00", end: "2026-04-10T08:59:59+10:00", state: "missed", completedBy: []),
            ])

            // Sam withdrew on 2026-03-25 at noon: the run open then expired, later ones are not his.
            try await h.sql("UPDATE participant_studies SET withdrawn_at = '2026-03-25T12:00:00+11:00' WHERE study_id = 'SLEEPWELL'")
            let (_, after) = try await fetch(h, participant, "?from=2026-03-20T00:00:00%2B11:00&to=2026-04-10T00:00:00%2B10:00", token: team.viewer)
            #expect(after["daily"]?.count == 11)
            #expect(after["daily"]?.last?.start == "2026-03-25T08:00:00+11:00")
            #expect(after["daily"]?.last?.state == "expired")
            #expect(after["weekly"]?.map(\.state) == ["completed"], "the second week opened after he left")
        }
    }

    @Test func aBadWindowOrAStrangerIsRefusedAndAnUnknownParticipantIsNotFound() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            let sam = try await h.signUp("sam@example.org")
            try await h.join("SLEEPWELL", auth: sam.auth, userId: sam.userId)
            let listed = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants", token: team.root)
            let participant = try #require(try JSONDecoder.iso8601.decode(ParticipantList.self, from: listed.body).participants.first?.participantId)
            let path = "/admin/v1/studies/SLEEPWELL/participants/\(participant)/runs"
            for query in [
                "?from=yesterday", "?to=2026-03-20T00:00:00", "?from=2026-03-20", "?from=2026-04-01T00:00:00Z&to=2026-03-01T00:00:00Z",
                "?from=2026-01-01T00:00:00Z&to=2027-01-03T00:00:00Z", "?from=\(String(repeating: "9", count: 60))",
                "?from=0001-01-01T00:00:00Z", "?from=2099-01-01T00:00:00Z&to=2099-06-01T00:00:00Z",
            ] {
                let refused = try await h.admin(.get, path + query, token: team.viewer)
                #expect(refused.status == .badRequest, "\(query)")
                #expect(String(decoding: refused.body, as: UTF8.self).contains("\"code\""), "\(query)")
            }
            #expect(try await h.admin(.get, path, token: team.stranger).status == .forbidden)
            #expect(try await h.admin(.get, path, token: nil).status == .unauthorized)
            let unknown = "/admin/v1/studies/SLEEPWELL/participants/\(UUID().uuidString.lowercased())/runs"
            #expect(try await h.admin(.get, unknown, token: team.viewer).status == .notFound)
            // With no window given: a week either side of now, and the example study's runs then.
            // Sam's app reported the participant id it holds, so the responses are asked of the
            // response service, which cannot be reached here: no runs are guessed without them.
            let unreachable = try await h.admin(.get, path, token: team.viewer)
            #expect(unreachable.status == .serviceUnavailable)
            #expect(String(decoding: unreachable.body, as: UTF8.self).contains("response service"))
            // A participant whose app never said has no responses to ask for.
            try await h.sql("UPDATE participant_studies SET participant_token_hash = NULL")
            let defaulted = try await h.admin(.get, path, token: team.viewer)
            #expect(defaulted.status == .ok)
            let reply = try JSONDecoder().decode(ParticipantRunsReply.self, from: defaulted.body)
            #expect(reply.timeZone == "America/New_York")
            // Joined just now: the lifetime one-time baseline and the ongoing log are due.
            #expect(reply.runs.filter { $0.state == "due" }.map(\.activityId).sorted() == ["anytimeLog", "baseline"])
        }
    }
}
