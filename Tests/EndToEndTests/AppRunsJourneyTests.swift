import Foundation
import StudyModels
import Testing
import TestSupport

/// The server's runs for an iPhone and an Android participant of one New York study, through the
/// real executables, as each app names them (docs/schedules.md, Where each rule comes from): both
/// joined on Wednesday 28 October 2026 at 15:30, after every activity opened; New York left summer
/// time on 1 November. Each participant's runs, and the run their app says it completed, are the
/// ones worked out from that app's code (`MyStudiesAppRulesTests` has each rule by itself).
@Suite(.needsCluster) struct AppRunsJourneyTests {
    /// Each run as `id start end`, RFC 3339 on the participant's clock, and `completed` when it is.
    static func runs(_ platform: Platform, participant: String, activity: String) async throws -> [String] {
        let url = platform.registration.baseURL + "/admin/v1/studies/NEWYORK/participants/\(participant)/runs?"
            + "from=2026-08-01T00:00:00Z&to=2027-04-30T00:00:00Z"
        let reply = try await platform.admin.send(.GET, url)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.json?["timeZone"]?.string == "America/New_York", "\(reply.text)")
        // Whether a run is due, upcoming or missed depends on today's date; completed does not.
        return (reply.json?["runs"]?.array ?? []).filter { $0["activityId"]?.string == activity }.map {
            "\($0["runId"]?.integer ?? 0) \($0["start"]?.string ?? "") \($0["end"]?.string ?? "open")"
                + ($0["state"]?.string == "completed" ? " completed" : "")
        }
    }

    @Test func eachParticipantsRunsAreTheRunsTheirOwnAppMakes() async throws {
        try await Platform.run { platform in
            let admin = platform.admin
            let demo = try await admin.send(.GET, "/admin/v1/studies/DEMOSTUDY/draft")
            var document = try #require(try JSONSerialization.jsonObject(with: demo.body) as? [String: Any])
            document["studyId"] = "NEWYORK"
            document["name"] = ["en": "New York sleep study"]
            document["timeZone"] = "America/New_York"
            document["notifications"] = nil
            document["dashboard"] = nil
            var activities = try #require(document["activities"] as? [[String: Any]])
            try #require(activities.map { $0["activityId"] as? String } == ["daily", "weekly", "kicks"])
            // "daily" monthly from 31 August, "weekly" on Mondays, "kicks" once; each until years
            // from now (a launch refuses an activity wholly in the past).
            activities[0]["schedule"] = ["frequency": "monthly", "startDate": "2026-08-31", "time": "09:00", "endDate": "2041-04-10"]
            activities[1]["schedule"] = ["frequency": "weekly", "startDate": "2026-10-19", "time": "09:00", "endDate": "2040-11-26"]
            activities[2]["schedule"] = ["frequency": "oneTime", "startDate": "2026-10-26", "time": "10:00", "endDate": "2040-12-03"]
            for index in activities.indices { activities[index]["reminder"] = nil }
            document["activities"] = activities
            let saved = try await admin.send(.PUT, "/admin/v1/studies/NEWYORK/draft", raw: try JSONSerialization.data(withJSONObject: document))
            #expect(saved.status == 201, "\(saved.text)")
            let launched = try await admin.send(.POST, "/admin/v1/studies/NEWYORK/launch")
            #expect(launched.status == 200, "\(launched.text)")
            let tokens = try await admin.tokens(responseBase: platform.response.baseURL, count: 2, studyId: "NEWYORK")
            try #require(tokens.count == 2)

            // Ines on her iPhone, Ade on his Android phone: each enrolls, and their app reports the
            // monthly run it counts as the one open on 15 November done.
            let people: [(MyStudiesApp.Kind, String, String)] = [(.ios, "ines@example.org", "1"), (.android, "ade@example.org", "3")]
            for (index, (kind, email, monthlyRun)) in people.enumerated() {
                let app = platform.app(kind)
                try await PlatformJourneyTests().signUp(app, email, platform: platform, deviceToken: nil)
                // The settings screen after sign-up, notifications off: the app says which it is.
                let settings: [String: Any] = [
                    "settings": ["remoteNotifications": false, "localNotifications": true, "touchId": false, "passcode": false,
                                 "reminderLeadTime": "00:00", "locale": ""],
                    "info": ["appVersion": "1.0", "os": kind == .ios ? "ios" : "android", "deviceToken": ""], "participantInfo": [Any](),
                ]
                #expect(try await app.registration("updateUserProfile", body: settings).status == 200)
                let appToken = try #require(try await app.response(
                    "enroll", [("studyId", "NEWYORK"), ("token", tokens[index]), ("allowDataSharing", "true")]).json?["data"]?["appToken"]?.string)
                #expect(try await app.registration(
                    "updateStudyState", body: ["studies": [["studyId": "NEWYORK", "status": "inProgress", "participantId": appToken]]]
                ).status == 200)
                let list = try #require(try await app.wcp("activityList", [("studyId", "NEWYORK")]).json?["activities"]?.array)
                let version = try #require(list.first { $0["activityId"]?.string == "daily" }?["activityVersion"]?.string)
                let state: [String: Any] = ["studyId": "NEWYORK", "activity": [
                    ["activityId": "daily", "activityRunId": monthlyRun, "activityState": "completed", "activityVersion": version,
                     "activityRun": ["total": Int(monthlyRun) ?? 0, "completed": 1, "missed": 0]],
                ]]
                #expect(try await app.registration("updateActivityState", body: state).status == 200)
                // The one-time activity's end, as both apps receive it: 23:59:59 of its end date.
                let once = list.first { $0["activityId"]?.string == "kicks" }
                #expect(once?["endTime"]?.string == "2040-12-03T23:59:59.000-0500", "\(once.map { "\($0)" } ?? "none")")
            }
            _ = try await platform.withRegistrationDatabase { postgres, logger in
                try await postgres.query(
                    "UPDATE participant_studies SET enrolled_at = '2026-10-28T15:30:00-04:00' WHERE study_id = 'NEWYORK'", logger: logger)
            }
            let listed = try await admin.send(.GET, platform.registration.baseURL + "/admin/v1/studies/NEWYORK/participants")
            let participants = listed.json?["participants"]?.array ?? []
            try #require(participants.count == 2, "\(listed.text)")
            let ines = try #require(participants.first { $0["email"]?.string == "ines@example.org" }?["participantId"]?.string)
            let ade = try #require(participants.first { $0["email"]?.string == "ade@example.org" }?["participantId"]?.string)

            var seen: [String: [String]] = [:]
            for (name, participant) in [("ines", ines), ("ade", ade)] {
                for activity in ["daily", "weekly", "kicks"] {
                    seen["\(name) \(activity)"] = try await Self.runs(platform, participant: participant, activity: activity)
                }
            }
            // Monthly. iOS counts months from her joining; Android from 31 August with its lenient
            // Calendar, run 1 ended before he joined. The run each app said done is the one
            // holding 15 November: her run 1, his run 3 (from 1 November to 1 January).
            #expect(Array(seen["ines daily", default: []].prefix(3)) == [
                "1 2026-10-28T15:30:00-04:00 2026-11-28T15:29:59-05:00 completed",
                "2 2026-11-28T15:30:00-05:00 2026-12-28T15:29:59-05:00",
                "3 2026-12-28T15:30:00-05:00 2027-01-28T15:29:59-05:00",
            ])
            #expect(Array(seen["ade daily", default: []].prefix(3)) == [
                "2 2026-09-30T09:00:00-04:00 2026-11-01T08:59:59-05:00",
                "3 2026-11-01T09:00:00-05:00 2027-01-01T08:59:59-05:00 completed",
                "4 2027-01-01T09:00:00-05:00 2027-02-28T08:59:59-05:00",
            ])
            // Weekly, joined on a Wednesday: iOS on the Monday of that week at 15:30; Android from
            // his joining, then Mondays at 09:00. Both keep the wall clock past 1 November.
            #expect(Array(seen["ines weekly", default: []].prefix(2)) == [
                "1 2026-10-26T15:30:00-04:00 2026-11-02T15:29:59-05:00",
                "2 2026-11-02T15:30:00-05:00 2026-11-09T15:29:59-05:00",
            ])
            #expect(Array(seen["ade weekly", default: []].prefix(2)) == [
                "1 2026-10-28T15:30:00-04:00 2026-11-02T08:59:59-05:00",
                "2 2026-11-02T09:00:00-05:00 2026-11-09T08:59:59-05:00",
            ])
            // Once: iOS from her joining, Android from the activity's start; to 3 December 2040 at 23:59:59.
            #expect(Array(seen["ines kicks", default: []]) == [
                "1 2026-10-28T15:30:00-04:00 2040-12-03T23:59:59-05:00",
            ])
            #expect(Array(seen["ade kicks", default: []]) == [
                "1 2026-10-26T10:00:00-04:00 2040-12-03T23:59:59-05:00",
            ])
        }
    }
}
