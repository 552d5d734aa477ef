import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

/// `/StudyMetaData/activityList`: schedules as the apps compute runs from them.
@Suite(.needsCluster) struct ActivityListTests {
    let api = WCPApp()

    @Test func schedulesAreListedInTheStudysTimeZone() async throws {
        try await api.withPublishedStudies { client, root, ios, android in
            let (response, reply) = try await api.get(client, "/StudyMetaData/activityList?studyId=SLEEPWELL", WCPApp.headers(ios))
            #expect(response.status == .ok)
            #expect(reply["message"] as? String == "SUCCESS")
            #expect(reply["studyName"] as? String == "Sleep Well")
            let activities = try #require(reply["activities"] as? [[String: Any]])
            func activity(_ id: String) throws -> [String: Any] { try #require(activities.first { $0["activityId"] as? String == id }) }
            #expect(activities.count == 9)

            // Daily: two windows; the end date is after the DST change, so its offset differs.
            let daily = try activity("daily")
            #expect(daily["startTime"] as? String == "2027-01-04T08:00:00.000-0500")
            #expect(daily["endTime"] as? String == "2027-03-28T23:59:59.000-0400")
            #expect(daily["schedulingType"] as? String == "Regular")
            #expect(daily["activityVersion"] as? String == "1.0")
            #expect(daily["state"] as? String == "active")
            #expect(daily["branching"] as? Bool == true)
            let dailyFrequency = try #require(daily["frequency"] as? [String: Any])
            #expect(dailyFrequency["type"] as? String == "Daily")
            #expect((dailyFrequency["runs"] as? [[String: String]]) == [
                ["startTime": "08:00:00", "endTime": "19:59:59"], ["startTime": "20:00:00", "endTime": "23:59:59"],
            ])

            // Weekly, anchored to enrollment.
            let weekly = try activity("weekly")
            #expect(weekly["schedulingType"] as? String == "AnchorDate")
            #expect(weekly["startTime"] as? String == "")
            let anchor = try #require(weekly["anchorDate"] as? [String: Any])
            #expect(anchor["sourceType"] as? String == "EnrollmentDate")
            let start = try #require(anchor["start"] as? [String: Any])
            #expect(start["anchorDays"] as? Int == 7)
            #expect(start["dayOfWeek"] == nil || start["dayOfWeek"] is NSNull, "none given, none served")
            #expect(start["time"] as? String == "09:00:00")
            #expect((anchor["end"] as? [String: Any])?["anchorDays"] as? Int == 84)

            // Monthly for three months from a start date.
            let monthly = try activity("monthlyCheck")
            #expect(monthly["startTime"] as? String == "2027-01-15T12:00:00.000-0500")
            #expect(monthly["endTime"] as? String == "2027-04-15T11:59:59.000-0400")
            #expect((monthly["frequency"] as? [String: Any])?["type"] as? String == "Monthly")

            // Manual runs, absolute and anchored to a participant property.
            let visits = try activity("clinicVisits")
            #expect(((visits["frequency"] as? [String: Any])?["runs"] as? [[String: String]])?.first
                == ["startTime": "2027-02-01T08:00:00.000-0500", "endTime": "2027-02-03T20:00:00.000-0500"])
            #expect((visits["frequency"] as? [String: Any])?["type"] as? String == "Manually Schedule")
            let surgery = try activity("postSurgery")
            #expect(((surgery["frequency"] as? [String: Any])?["anchorRuns"] as? [[String: Any]])?.count == 2)
            #expect(((surgery["anchorDate"] as? [String: Any])?["propertyMetadata"] as? [String: Any])?["propertyId"] as? String == "surgeryDate")
            #expect((try activity("followUp")["anchorDate"] as? [String: Any])?["sourceKey"] as? String == "diagnosisDate")

            // Launch-relative and open-ended ones start at the launch and have no end.
            for id in ["baseline", "anytimeLog"] {
                let entry = try activity(id)
                #expect((entry["startTime"] as? String)?.hasPrefix("20") == true, "\(id)")
                #expect(entry["endTime"] as? String == "", "\(id)")
            }
            let kicks = try activity("kicks")
            #expect(kicks["type"] as? String == "task")
            #expect(kicks["taskSubType"] as? String == "fetalKickCounter")

            // An activity removed by an update stays listed as deleted, with its removal as end.
            var document = try JSONSerialization.jsonObject(with: Data(contentsOf: MetadataAdmin.exampleURL)) as! [String: Any]
            document["activities"] = (document["activities"] as! [[String: Any]]).filter { $0["activityId"] as? String != "anytimeLog" }
            let edited = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            #expect(try await api.helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited).0 == .ok)
            #expect(try await api.helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root).0 == .ok)
            let (_, after) = try await api.get(client, "/StudyMetaData/activityList?studyId=SLEEPWELL", WCPApp.headers(android, android: true))
            let removed = try #require((after["activities"] as? [[String: Any]])?.first { $0["activityId"] as? String == "anytimeLog" })
            #expect(removed["state"] as? String == "deleted")
            #expect((removed["endTime"] as? String)?.isEmpty == false)
            #expect((after["activities"] as? [[String: Any]])?.count == 9)

            // An upcoming study lists no activities.
            let (_, upcoming) = try await api.get(client, "/StudyMetaData/activityList?studyId=IOSONLY", WCPApp.headers(ios))
            #expect((upcoming["activities"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func aTimeoutIsServedAsTheEndOfEachDailyWindow() async throws {
        try await api.withPublishedStudies { client, root, ios, _ in
            var document = try JSONSerialization.jsonObject(with: Data(contentsOf: MetadataAdmin.exampleURL)) as! [String: Any]
            var activities = document["activities"] as! [[String: Any]]
            let index = try #require(activities.firstIndex { $0["activityId"] as? String == "daily" })
            var schedule = activities[index]["schedule"] as! [String: Any]
            schedule["expiresAfterMilliseconds"] = 90 * 60_000
            activities[index]["schedule"] = schedule
            document["activities"] = activities
            let edited = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            #expect(try await api.helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited).0 == .ok)
            #expect(try await api.helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root).0 == .ok)
            let (_, reply) = try await api.get(client, "/StudyMetaData/activityList?studyId=SLEEPWELL", WCPApp.headers(ios))
            let daily = try #require((reply["activities"] as? [[String: Any]])?.first { $0["activityId"] as? String == "daily" })
            // An hour and a half from each window's start: the apps show and expire the run then.
            #expect(((daily["frequency"] as? [String: Any])?["runs"] as? [[String: String]]) == [
                ["startTime": "08:00:00", "endTime": "09:29:59"], ["startTime": "20:00:00", "endTime": "21:29:59"],
            ])
        }
    }
}
