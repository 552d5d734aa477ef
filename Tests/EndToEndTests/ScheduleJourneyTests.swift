import Foundation
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The schedule engine's journey through the real executables: a participant in Melbourne who
/// enrolled in March (summer time ends on 5 April), a daily and a weekly activity, responses for
/// some runs; the console's timeline and adherence table show which runs were completed and which
/// missed, a due run's reminder reaches APNs (a local HTTP/2 server speaking its protocol), and one
/// whose quiet hours it is waits.
@Suite(.needsCluster) struct ScheduleJourneyTests {
    static let melbourne = TimeZone(identifier: "Australia/Melbourne")!
    static let apnsToken = String(repeating: "3b", count: 32)

    /// `HH:mm` on Melbourne's clock `offset` seconds from now.
    static func clock(_ offset: TimeInterval) -> String {
        let seconds = WallClock(Date().addingTimeInterval(offset), in: melbourne)!.seconds
        return String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60)
    }

    /// A response as the iOS app sends it, naming `run` (or none), finished at `endTime`.
    static func response(appToken: String, activity: String, name: String, version: String, run: String?, endTime: String) -> [String: Any] {
        var metadata: [String: Any] = ["studyId": "MELBOURNE", "activityId": activity, "name": name, "version": version]
        if let run { metadata["activityRunId"] = run }
        return ["type": "questionnaire", "participantId": appToken, "metadata": metadata,
                "data": ["resultType": "questionnaire", "startTime": endTime, "endTime": endTime, "results": [] as [Any]]]
    }

    /// The weekly survey's run open now: Sam's first opened on Friday 20 March 2026 at 10:00 on
    /// his clock (he joined then, after the survey opened at 09:00: his iPhone opens a late
    /// joiner's weekly runs at the time of day they joined), and one more opens each Friday at
    /// 10:00 (whatever the offset that day).
    static func weeklyRunOpenNow() -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = melbourne
        guard let first = calendar.date(from: DateComponents(year: 2026, month: 3, day: 20, hour: 10)) else { return 0 }
        var run = 1
        while let next = calendar.date(byAdding: .day, value: 7 * run, to: first), next <= Date() { run += 1 }
        return run
    }

    @Test func aMelbourneParticipantsRunsRemindersAndAdherenceFromTheAppToTheConsole() async throws {
        try await FakeAPNs.forPlatform { apns, push in
            try await Platform.run(registrationSettings: push) { platform in try await journey(platform, apns: apns) }
        }
    }

    func journey(_ platform: Platform, apns: FakeAPNs) async throws {
        let admin = platform.admin
        // DEMOAPP's APNs key, uploaded as an admin does: study-metadata relays it to registration.
        let credentials = try await admin.send(.PUT, "/admin/v1/apps/DEMOAPP/push/ios", raw: try JSONEncoder().encode(apns.credentials))
        #expect(credentials.status == 200, "\(credentials.text)")

        // The study, in Melbourne: the daily check-in at 08:00 and 20:00 from 1 March 2026; the
        // weekly survey from enrolment at 09:00, reminded of when it opens, with quiet hours
        // later today; the kick counter, always open, reminded of with quiet hours now.
        let demo = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
        var document = try #require(try JSONSerialization.jsonObject(with: demo.body) as? [String: Any])
        document["studyId"] = "MELBOURNE"
        document["name"] = ["en": "Melbourne sleep study"]
        document["timeZone"] = "Australia/Melbourne"
        document["notifications"] = nil
        document["dashboard"] = nil
        var activities = try #require(document["activities"] as? [[String: Any]])
        try #require(activities.map { $0["activityId"] as? String } == ["daily", "weekly", "kicks"])
        activities[0]["schedule"] = ["frequency": "daily", "startDate": "2026-03-01", "endDate": "2027-06-30", "dailyTimes": ["08:00", "20:00"]]
        // The demo's daily reminder (two hours into a run, quiet at night) would be due or not by
        // the hour in Melbourne the test runs at: the reminders here are the weekly's and the
        // kick counter's, whose quiet hours are set from now.
        activities[0]["reminder"] = nil
        activities[1]["schedule"] = ["frequency": "weekly", "anchor": ["source": "enrollmentDate"], "startDays": 0, "repeatCount": 52, "time": "09:00"]
        activities[1]["reminder"] = [
            "afterMinutes": 0, "maxPerDay": 1, "quietFrom": Self.clock(2 * 3600), "quietUntil": Self.clock(3 * 3600),
            "message": ["en": "Your weekly survey is waiting."],
        ]
        let quietUntil = Self.clock(2 * 3600)
        activities[2]["schedule"] = ["frequency": "ongoing"]
        activities[2]["reminder"] = ["afterMinutes": 0, "quietFrom": Self.clock(-3600), "quietUntil": quietUntil]
        document["activities"] = activities
        let saved = try await admin.send(.PUT, "/admin/v1/studies/MELBOURNE/draft", raw: try JSONSerialization.data(withJSONObject: document))
        #expect(saved.status == 201, "\(saved.text)")
        let launched = try await admin.send(.POST, "/admin/v1/studies/MELBOURNE/launch")
        #expect(launched.status == 200, "\(launched.text)")
        let token = try #require(try await admin.tokens(responseBase: platform.response.baseURL, count: 1, studyId: "MELBOURNE").first)

        // Sam signs up on his iPhone (notifications on), enrolls and joins.
        let app = platform.app(.ios)
        try await PlatformJourneyTests().signUp(app, "sam@example.org", platform: platform, deviceToken: Self.apnsToken)
        let appToken = try #require(try await app.response(
            "enroll", [("studyId", "MELBOURNE"), ("token", token), ("allowDataSharing", "true")]).json?["data"]?["appToken"]?.string)
        #expect(try await app.registration(
            "updateStudyState", body: ["studies": [["studyId": "MELBOURNE", "status": "inProgress", "participantId": appToken]]]
        ).status == 200)
        // ... as if on 20 March at 10:00 in Melbourne.
        _ = try await platform.withRegistrationDatabase { postgres, logger in
            try await postgres.query(
                "UPDATE participant_studies SET enrolled_at = '2026-03-20T10:00:00+11:00' WHERE study_id = 'MELBOURNE'", logger: logger)
        }

        // His app reports the first weekly survey and the first evening check-in done.
        let list = try #require(try await app.wcp("activityList", [("studyId", "MELBOURNE")]).json?["activities"]?.array)
        let version = try #require(list.first { $0["activityId"]?.string == "daily" }?["activityVersion"]?.string)
        let weeklyVersion = try #require(list.first { $0["activityId"]?.string == "weekly" }?["activityVersion"]?.string)
        let design = try await app.wcp("activity", [("studyId", "MELBOURNE"), ("activityId", "daily"), ("activityVersion", version)])
        let name = try #require(design.json?["activity"]?["metadata"]?["name"]?.string)
        let states: [String: Any] = ["studyId": "MELBOURNE", "activity": [
            ["activityId": "weekly", "activityRunId": "1", "activityState": "completed", "activityVersion": weeklyVersion,
             "activityRun": ["total": 1, "completed": 1, "missed": 0]],
            ["activityId": "daily", "activityRunId": "2", "activityState": "completed", "activityVersion": version,
             "activityRun": ["total": 2, "completed": 1, "missed": 1]],
        ]]
        #expect(try await app.registration("updateActivityState", body: states).status == 200)
        // His responses: the evening of the 20th (run 2), the morning of 5 April after the
        // clocks went back (run 33, +10:00), and one naming no run finished on the evening of
        // 6 April (the window open then: run 36).
        for (run, endTime) in [("2", "2026-03-20T21:00:00.000+1100"), ("33", "2026-04-05T08:30:00.000+1000"), (nil, "2026-04-06T20:30:00.000+1000")] {
            let sent = try await app.processResponse(
                Self.response(appToken: appToken, activity: "daily", name: name, version: version, run: run, endTime: endTime))
            #expect(sent.status == 200, "\(sent.text)")
        }
        try await eventually("the three responses read from the response service's feed", within: .seconds(30)) {
            try await platform.withRegistrationDatabase { postgres, logger in
                try await postgres.query("SELECT count(*)::int FROM response_arrivals", logger: logger).decode(Int.self).collect()
            }
        } until: { $0 == [3] }

        // The weekly survey's run open now (one more each Friday at 10:00) is reminded of:
        // one push, to his iPhone, with the study's text.
        // (The launch's announcement of the new study reaches the iPhone too.)
        let pushed = try await eventually("the weekly reminder delivered to APNs", within: .seconds(60)) {
            apns.received.filter { $0.payload["activityId"] != nil }
        } until: { !$0.isEmpty }
        try #require(pushed.count == 1, "\(pushed.map { "\($0.payload["activityId"]?.text ?? "-"): \($0.payload["aps"]?["alert"]?["body"]?.text ?? "")" })")
        #expect(pushed[0].deviceToken == Self.apnsToken)
        #expect(pushed[0].payload["aps"]?["alert"]?["body"]?.text == "Your weekly survey is waiting.")
        #expect(pushed[0].payload["activityId"]?.text == "weekly" && pushed[0].payload["studyId"]?.text == "MELBOURNE")
        #expect(pushed[0].payload["subtype"]?.text == "Activity")
        // The kick counter's waits for the end of its quiet hours: decided never yet, planned then.
        let kicks = try await platform.withRegistrationDatabase { postgres, logger in
            try await postgres.query(
                """
                SELECT (SELECT count(*)::int FROM run_reminders WHERE activity_id = 'kicks'),
                       (SELECT remind_at FROM participant_activity_standings WHERE activity_id = 'kicks')
                """, logger: logger
            ).decode((Int, Date?).self).collect()
        }
        try #require(kicks.count == 1)
        #expect(kicks[0].0 == 0)
        let planned = try #require(kicks[0].1)
        let plannedClock = WallClock(planned, in: Self.melbourne)!.seconds
        #expect(planned > Date() && String(format: "%02d:%02d", plannedClock / 3600, plannedClock / 60 % 60) == quietUntil)

        // The console, as the research team's browser reaches it.
        let consolePort = try SMTPTestServer.freePort()
        let console = try await ServiceProcess.start(
            "console",
            environment: [
                "CONSOLE_KEY": InternalKeys.generateKey(), "LOG_LEVEL": "warning", "CONSOLE_PUBLIC_URL": "http://127.0.0.1:\(consolePort)",
                "STUDY_METADATA_URL": platform.metadata.baseURL, "REGISTRATION_URL": platform.registration.baseURL,
                "RESPONSE_URL": platform.response.baseURL,
            ],
            port: consolePort)
        defer { _ = console.stop() }
        let browser = WireBrowser(base: console.baseURL)
        try await browser.signIn(Platform.adminEmail, Platform.adminPassword)
        let participants = try await admin.send(.GET, platform.registration.baseURL + "/admin/v1/studies/MELBOURNE/participants")
        let participant = try #require(participants.json?["participants"]?.array?.first?["participantId"]?.string)
        // His page is at his number in the study (its first participant); the address by
        // registration's id leads there, with what it asked for.
        let moved = try await eventually("his page at his number", within: .seconds(30)) {
            try await browser.send(.GET, "/studies/MELBOURNE/participants/\(participant)?timeline=2026-03-30")
        } until: { $0.status == 303 }
        #expect(moved.header("Location") == "/studies/MELBOURNE/participants/1?timeline=2026-03-30")

        // His timeline from Monday 30 March: the clocks went back on Sunday 5 April, and the
        // runs stayed at 08:00 and 20:00 on his clock.
        let page = try await eventually("his runs counted with the three responses", within: .seconds(30)) {
            try await browser.send(.GET, "/studies/MELBOURNE/participants/1?timeline=2026-03-30")
        } until: { $0.text.contains(#"data-run="36" data-state="completed""#) }
        #expect(page.status == 200)
        #expect(page.text.contains("Australia/Melbourne (read from the offsets their responses carry)"))
        func chip(_ run: Int, in html: String, activity: String = "daily") -> String? {
            let row = html.components(separatedBy: #"<div class="run-row" data-activity="\#(activity)">"#).dropFirst().first ?? ""
            return row.firstMatch(of: try! Regex(#"<li class="run [a-z]+" data-run="\#(run)" data-state="[a-z]+" title="([^"]*)""#))
                .map { String($0.output[1].substring ?? "") }
        }
        #expect(chip(31, in: page.text) == "Run 31, Sat 4 Apr 08:00 to 19:59 (+11:00): missed")
        #expect(chip(33, in: page.text) == "Run 33, Sun 5 Apr 08:00 to 19:59 (+10:00): completed, said by a response")
        #expect(chip(34, in: page.text) == "Run 34, Sun 5 Apr 20:00 to 23:59 (+10:00): missed")
        #expect(chip(36, in: page.text) == "Run 36, Mon 6 Apr 20:00 to 23:59 (+10:00): completed, said by a response")
        #expect(chip(3, in: page.text, activity: "weekly") == "Run 3, Fri 3 Apr 10:00 to Fri 10 Apr 09:59 (+11:00): missed")
        // His first days: run 2 done by both the app's word and the response.
        let first = try await browser.send(.GET, "/studies/MELBOURNE/participants/1?timeline=2026-03-20")
        #expect(chip(1, in: first.text) == "Run 1, Fri 20 Mar 08:00 to 19:59 (+11:00): missed")
        #expect(chip(2, in: first.text) == "Run 2, Fri 20 Mar 20:00 to 23:59 (+11:00): completed, said by their app and a response")
        #expect(chip(1, in: first.text, activity: "weekly") == "Run 1, Fri 20 Mar 10:00 to Fri 27 Mar 09:59 (+11:00): completed, said by their app")

        // The adherence table for the weeks to 12 April: per week (Monday, on his clock) the
        // runs completed of those closed.
        // (The timeline reads the responses as they arrived; the weeks are counted by the sweep after.)
        let adherence = try await eventually("the weeks counted with all three responses", within: .seconds(30)) {
            try await browser.send(.GET, "/studies/MELBOURNE/adherence?until=2026-04-12")
        } until: { $0.text.contains("<tr><th scope=\"row\">2026-04-06</th><td>1 of 14") }
        #expect(adherence.status == 200)
        let table = try #require(adherence.text.firstMatch(of: /<table class="list" id="adherence-weeks">(.*?)<\/table>/.dotMatchesNewlines())?.1)
        // (The kick counter opened with the launch, in November: it has no runs in these weeks.)
        #expect(table.contains(#"<th scope="col"><code>daily</code></th><th scope="col"><code>weekly</code></th></tr>"#), "\(table)")
        let rows = Dictionary(uniqueKeysWithValues: table.matches(of: /<tr><th scope="row">([0-9-]+)<\/th>(.*?)<\/tr>/).map { (String($0.1), String($0.2)) })
        #expect(rows == [
            // Friday to Sunday: six check-ins, the evening of the 20th done; the first weekly survey done.
            "2026-03-16": "<td>1 of 6 · 17%</td><td>1 of 1 · 100%</td>",
            "2026-03-23": "<td>0 of 14 · 0%</td><td>0 of 1 · 0%</td>",
            // The week the clocks went back: still fourteen check-ins, one done (5 April's morning).
            "2026-03-30": "<td>1 of 14 · 7%</td><td>0 of 1 · 0%</td>",
            "2026-04-06": "<td>1 of 14 · 7%</td><td>0 of 1 · 0%</td>",
        ], "\(rows)")
        // Now: the weekly reminder counted in this week's row, and Sam behind on the weekly survey
        // by every run since the first but the one open now (35 on 28 November 2026: 2 to 36), his
        // app's own count (nothing missed) beside the server's.
        let missed = Self.weeklyRunOpenNow() - 2
        let now = try await browser.send(.GET, "/studies/MELBOURNE/adherence?activity=weekly&atLeast=\(missed)")
        #expect(now.text.contains("1 reminded"))
        let behind = try #require(now.text.firstMatch(of: /<tr data-participant="([0-9a-f-]+)" class="disagrees">(.*?)<\/tr>/)?.output)
        #expect(behind.1 == participant)
        #expect(
            behind.2.contains(
                #"<td class="number">\#(missed)</td><td>1 done · \#(missed) missed</td><td>1 done · 0 missed <span class="badge">differs</span>"#),
            "\(behind.2)")
        #expect(behind.2.contains("Australia/Melbourne"))
    }
}
