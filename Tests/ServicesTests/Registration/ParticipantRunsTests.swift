import Foundation
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// `GET /admin/v1/studies/{studyId}/participants/{participantId}/runs`: a participant's runs from
/// the published schedule, in their zone, with states from the completions their app reported and
/// the responses that reached the response service.
@Suite(.needsCluster) struct ParticipantRunsTests {
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

    /// The example study's date property, which its `postSurgery` activity is anchored to.
    static let surgeryDate = ParticipantProperty(key: "surgeryDate", timing: .preEnrollment, dataType: .date, useAsAnchor: true)

    /// Study-metadata with the Melbourne study, and the response service and registration each on
    /// a real port, calling each other.
    static func withServices(
        _ body: @escaping @Sendable (RegistrationHarness, ResponseHarness, StudyMetadataFixture.Team) async throws -> Void
    ) async throws {
        try await withServicesAndMetadata { registration, response, team, _ in try await body(registration, response, team) }
    }

    /// The same, with study-metadata's address too (for an API key, say).
    static func withServicesAndMetadata(
        _ body: @escaping @Sendable (RegistrationHarness, ResponseHarness, StudyMetadataFixture.Team, String) async throws -> Void
    ) async throws {
        let registrationPort = try SMTPTestServer.freePort()
        try await StudyMetadataFixture.run(studies: ["SLEEPWELL"], team: true, document: { try Self.melbourneStudy($0) }) { metadataURL, team in
            let team = try #require(team)
            try await ResponseHarness.run(
                overrides: ["studyMetadata.url": metadataURL, "registration.url": "http://127.0.0.1:\(registrationPort)"], live: true
            ) { response in
                #expect(try await response.studyEvent("SLEEPWELL", version: 99, properties: [Self.surgeryDate]) == .ok)
                try await RegistrationHarness.run(
                    overrides: ["studyMetadata.url": metadataURL, "response.url": "http://127.0.0.1:\(response.client.port!)"],
                    peerPort: registrationPort
                ) { registration in
                    try await body(registration, response, team, metadataURL)
                }
            }
        }
    }

    /// Sam signs up, enrolls at the response service (with `token` when given) and joins with the
    /// participant id it gave his app, as if on 2026-03-20 at 10:00 in Melbourne on an iPhone;
    /// returns that id and his account's session.
    static func enrolSam(_ h: RegistrationHarness, _ response: ResponseHarness, token: String? = nil) async throws
        -> (appToken: String, sam: (userId: String, auth: String, refresh: String))
    {
        let sam = try await h.signUp("sam@example.org")
        var body = ["studyId": "SLEEPWELL", "allowDataSharing": "true"]
        if let token { body["token"] = token }
        let (_, enrolled, _) = try await response.call("mobileappstudy-enroll.api", json: body)
        let appToken = try #require(enrolled["data"]?["appToken"]?.text)
        try await h.join("SLEEPWELL", auth: sam.auth, userId: sam.userId, token: appToken)
        try await h.sql("UPDATE participant_studies SET enrolled_at = '2026-03-20T10:00:00+11:00' WHERE study_id = 'SLEEPWELL'")
        try await h.sql("UPDATE participant_sessions SET device_os = 'ios'")
        return (appToken, sam)
    }

    /// A response as the app posts it, naming `run` (or no run), finished at `endTime` as the app
    /// writes it (with its offset), with `results`.
    static func submit(
        _ response: ResponseHarness, appToken: String, activity: String, run: String?, endTime: String, results: [[String: Any]] = []
    ) async throws {
        var metadata: [String: Any] = ["activityId": activity, "version": "1.0"]
        if let run { metadata["activityRunId"] = run }
        let (status, body, _) = try await response.call(
            "mobileappstudy-processResponse.api",
            json: ["type": "SurveyResponse", "participantId": appToken, "metadata": metadata,
                   "data": ["startTime": endTime, "endTime": endTime, "results": results]])
        #expect(status == .ok, "\(body)")
    }

    @Test func aMelbourneParticipantsRunsAcrossTheEndOfSummerTime() async throws {
        try await Self.withServices { h, response, team in
            // Sam enrolled on 2026-03-20 at 10:00 in Melbourne, on an iPhone.
            let (appToken, sam) = try await Self.enrolSam(h, response)
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
            // Registration reads them from the response service's feed.
            try await eventually("the three responses read from the feed", within: .seconds(30)) {
                try await h.count("SELECT count(*)::int FROM response_arrivals")
            } until: { $0 == 3 }
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
            // Weekly from the enrolment day at 09:00. Sam joined at 10:00, after it opened: his
            // iPhone opens each run at the time of day he joined (docs/schedules.md, Weekly), and
            // keeps it on the wall clock after 5 April. The fourth starts after `to`.
            #expect(runs["weekly"] == [
                Listed(runId: 1, start: "2026-03-20T10:00:00+11:00", end: "2026-03-27T09:59:59+11:00", state: "completed", completedBy: ["app"]),
                Listed(runId: 2, start: "2026-03-27T10:00:00+11:00", end: "2026-04-03T09:59:59+11:00", state: "missed", completedBy: []),
                Listed(runId: 3, start: "2026-04-03T10:00:00+11:00", end: "2026-04-10T09:59:59+10:00", state: "missed", completedBy: []),
            ])

            // The kept standings, counted from the same data once it arrived (today's date
            // decides how many daily runs have opened since March, not what became of March's).
            let counted = try await eventually("Sam's standings counted with the three responses", within: .seconds(30)) {
                try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(participant)/runs/weeks?weeks=105", token: team.viewer)
            } until: { reply in
                let weeks = try? JSONDecoder().decode(ParticipantRunWeeks.self, from: reply.body)
                return weeks?.weeks.last?.activities.first { $0.activityId == "daily" }?.completed == 3
            }
            let report = try JSONDecoder().decode(ParticipantRunWeeks.self, from: counted.body)
            #expect(report.timeZone == "Australia/Melbourne")
            // The first week, Monday 16 March: Friday to Sunday's six daily runs, three of them
            // completed, the first weekly run, completed, and the example study's one-time
            // baseline and ongoing log, open since he joined.
            let firstWeek = try #require(report.weeks.last)
            #expect(firstWeek.week == "2026-03-16")
            #expect(firstWeek.activities == [
                .init(activityId: "anytimeLog", opened: 1, completed: 0, missed: 0, expired: 0),
                .init(activityId: "baseline", opened: 1, completed: 0, missed: 0, expired: 0),
                .init(activityId: "daily", opened: 6, completed: 3, missed: 3, expired: 0),
                .init(activityId: "weekly", opened: 1, completed: 1, missed: 0, expired: 0),
            ])
            #expect(firstWeek.adherencePercent == 57, "4 of 7")
            // The study's weeks are the same sums (Sam is its only participant).
            let weeks = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/weeks?from=2026-03-16&to=2026-04-12", token: team.viewer)
            let study = try JSONDecoder().decode(StudyRunWeeks.self, from: weeks.body)
            #expect(study.from == "2026-03-16" && study.to == "2026-04-06")
            #expect(study.activities.map(\.activityId) == ["anytimeLog", "baseline", "daily", "weekly"])
            #expect(study.activities[2].weeks.first == RunWeek(
                week: "2026-03-16", opened: 6, completed: 3, missed: 3, expired: 0, reminded: 0, notReminded: 0))
            #expect(study.activities[2].weeks.count == 4)
            #expect(study.activities[3].weeks.map(\.week) == ["2026-03-16", "2026-03-23", "2026-03-30", "2026-04-06"])
            #expect(study.activities[3].weeks.map(\.missed) == [0, 1, 1, 1])
            // Behind right now: every weekly run after the first missed, and daily ones since
            // the 22nd's evening; with the app's own count beside the weekly one.
            let behind = try JSONDecoder().decode(
                ParticipantsBehind.self,
                from: try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/behind?activityId=weekly", token: team.viewer).body)
            try #require(behind.entries.count == 1)
            #expect(behind.entries[0].participantId == participant && behind.entries[0].missedInARow == 3)
            #expect((behind.entries[0].opened, behind.entries[0].completed, behind.entries[0].missed) == (4, 1, 3))
            #expect(behind.entries[0].lastContact != nil && behind.entries[0].timeZone == "Australia/Melbourne")
            #expect(behind.next == nil)
            let all = try JSONDecoder().decode(
                ParticipantsBehind.self,
                from: try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/behind?atLeast=3", token: team.viewer).body)
            #expect(all.entries.map(\.activityId) == ["daily", "weekly"], "most behind first")

            // Sam withdrew on 2026-03-25 at noon: the run open then expired, later ones are not his.
            try await h.sql("UPDATE participant_studies SET withdrawn_at = '2026-03-25T12:00:00+11:00' WHERE study_id = 'SLEEPWELL'")
            let (_, after) = try await fetch(h, participant, "?from=2026-03-20T00:00:00%2B11:00&to=2026-04-10T00:00:00%2B10:00", token: team.viewer)
            #expect(after["daily"]?.count == 11)
            #expect(after["daily"]?.last?.start == "2026-03-25T08:00:00+11:00")
            #expect(after["daily"]?.last?.state == "expired")
            #expect(after["weekly"]?.map(\.state) == ["completed"], "the second week opened after he left")
            // His standings are counted again at once: eleven daily runs, one expired; and he is
            // behind no longer, as he left.
            try await eventually("Sam's standings counted after he withdrew", within: .seconds(30)) {
                try await h.count("SELECT runs_opened FROM participant_activity_standings WHERE activity_id = 'daily'")
            } until: { $0 == 11 }
            #expect(try await h.count("SELECT runs_expired FROM participant_activity_standings WHERE activity_id = 'daily'") == 1)
            let gone = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/behind", token: team.viewer)
            #expect(try JSONDecoder().decode(ParticipantsBehind.self, from: gone.body).entries.isEmpty)
            // Counted again with nothing changed (his runs all ended when he left), his standings
            // and weeks are not written: the same row versions (`xmin`), so neither their indexes
            // nor the study's sums are touched by a count that finds what is already there.
            try await h.sql("CREATE TABLE standings_before AS SELECT activity_id, xmin::text AS version FROM participant_activity_standings")
            try await h.sql("CREATE TABLE weeks_before AS SELECT activity_id, week, xmin::text AS version FROM participant_run_weeks")
            let standingRows = try await h.count("SELECT count(*)::int FROM standings_before")
            let weekRows = try await h.count("SELECT count(*)::int FROM weeks_before")
            try #require(standingRows > 0 && weekRows > 0)
            try await h.sql("UPDATE participant_run_ledgers SET recount_at = now(), counted_at = NULL")
            try await eventually("Sam's standings counted again", within: .seconds(30)) {
                try await h.count("SELECT count(*)::int FROM participant_run_ledgers WHERE counted_at IS NOT NULL")
            } until: { $0 == 1 }
            #expect(try await h.count("""
                SELECT count(*)::int FROM participant_activity_standings s JOIN standings_before b USING (activity_id)
                WHERE s.xmin::text = b.version
                """) == standingRows)
            #expect(try await h.count("""
                SELECT count(*)::int FROM participant_run_weeks w JOIN weeks_before b USING (activity_id, week)
                WHERE w.xmin::text = b.version
                """) == weekRows)
            // The study's sums are his, week by week; deleting his account takes them away.
            let sums = "SELECT activity_id, week, sum(runs_opened), sum(runs_completed), sum(runs_missed), sum(runs_expired) FROM"
            #expect(try await h.count(PostgresQuery(unsafeSQL: """
                SELECT count(*)::int FROM ((\(sums) participant_run_weeks GROUP BY 1, 2
                    EXCEPT \(sums) study_run_weeks GROUP BY 1, 2)
                UNION ALL (\(sums) study_run_weeks WHERE runs_opened > 0 GROUP BY 1, 2
                    EXCEPT \(sums) participant_run_weeks GROUP BY 1, 2)) differing
                """)) == 0)
            try await h.sql("DELETE FROM participants")
            #expect(try await h.count("SELECT count(*)::int FROM study_run_weeks WHERE runs_opened <> 0 OR runs_missed <> 0") == 0)
            #expect(try await h.count("SELECT count(*)::int FROM response_arrivals") == 0)
        }
    }

    @Test func whoIsBehindIsListedMostBehindFirstPageByPage() async throws {
        try await RegistrationHarness.run(studies: ["SLEEPWELL"], team: true) { h, team in
            for name in ["ann", "bob", "cat", "dan", "eve"] {
                let user = try await h.signUp("\(name)@example.org")
                try await h.join("SLEEPWELL", auth: user.auth, userId: user.userId)
            }
            try await eventually("five participants counted", within: .seconds(30)) {
                try await h.count("SELECT count(*)::int FROM participant_run_ledgers WHERE counted_at IS NOT NULL")
            } until: { $0 == 5 }
            // Their daily standings as if they had missed 5, 4, 4, 2 and 0 runs in a row, kept
            // from being counted again while the test reads them.
            try await h.sql(
                """
                UPDATE participant_activity_standings s SET missed_in_a_row = v.n
                FROM (SELECT user_id, (ARRAY[5, 4, 4, 2, 0])[row_number() OVER (ORDER BY user_id)] AS n FROM participant_studies) v
                WHERE s.user_id = v.user_id AND s.activity_id = 'daily'
                """)
            try await h.sql("UPDATE participant_run_ledgers SET recount_at = 'infinity'")
            var pages: [[ParticipantsBehind.Entry]] = []
            var query = "?activityId=daily&limit=2"
            while pages.count < 5 {
                let reply = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/behind" + query, token: team.viewer)
                try #require(reply.status == .ok, "\(String(decoding: reply.body, as: UTF8.self))")
                let page = try JSONDecoder().decode(ParticipantsBehind.self, from: reply.body)
                pages.append(page.entries)
                guard let next = page.next else { break }
                query = "?activityId=daily&limit=2&after=" + (next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            }
            #expect(pages.map(\.count) == [2, 2])
            let listed = pages.flatMap { $0 }
            #expect(listed.map(\.missedInARow) == [5, 4, 4, 2])
            #expect(Set(listed.map(\.participantId)).count == 4)
            // Those equally behind go by account (the order of the index the list is read by).
            let tiedInOrder = try await h.count(
                """
                SELECT count(*)::int FROM participant_studies a, participant_studies b
                WHERE a.pseudonym = \(listed[1].participantId)::uuid AND b.pseudonym = \(listed[2].participantId)::uuid
                  AND a.user_id < b.user_id
                """)
            #expect(tiedInOrder == 1, "ties by account")
            let atLeastFour = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/behind?atLeast=4", token: team.viewer)
            #expect(try JSONDecoder().decode(ParticipantsBehind.self, from: atLeastFour.body).entries.map(\.missedInARow) == [5, 4, 4])

            // Bad parameters are refused by name; a stranger and no one are refused.
            for query in [
                "behind?atLeast=0", "behind?limit=501", "behind?limit=x", "behind?after=nonsense", "behind?after=1.not-a-uuid.daily",
                "behind?activityId=\(String(repeating: "a", count: 101))", "weeks?from=2026-13-01", "weeks?from=yesterday",
                "weeks?from=2026-04-01&to=2026-03-01", "weeks?from=2020-01-01&to=2026-01-01", "weeks?to=0001-01-01",
            ] {
                let refused = try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/" + query, token: team.viewer)
                #expect(refused.status == .badRequest, "\(query)")
            }
            #expect(try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/behind", token: team.stranger).status == .forbidden)
            #expect(try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/runs/weeks", token: nil).status == .unauthorized)
            let unknown = "/admin/v1/studies/SLEEPWELL/participants/\(UUID().uuidString.lowercased())/runs/weeks"
            #expect(try await h.admin(.get, unknown, token: team.viewer).status == .notFound)
            let participant = try #require(listed.first?.participantId)
            #expect(try await h.admin(.get, "/admin/v1/studies/SLEEPWELL/participants/\(participant)/runs/weeks?weeks=106", token: team.viewer)
                .status == .badRequest)
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
            let defaulted = try await h.admin(.get, path, token: team.viewer)
            #expect(defaulted.status == .ok)
            let reply = try JSONDecoder().decode(ParticipantRunsReply.self, from: defaulted.body)
            #expect(reply.timeZone == "America/New_York")
            // Joined just now: the lifetime one-time baseline and the ongoing log are due.
            #expect(reply.runs.filter { $0.state == "due" }.map(\.activityId).sorted() == ["anytimeLog", "baseline"])
        }
    }
}
