import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport

/// `termsPolicy`, `studyInfo`, `resources` and `studyDashboard` of the app API.
@Suite(.needsCluster) struct StudyContentAPITests {
    let api = WCPApp()

    @Test func servesOverviewResourcesDashboardAndTerms() async throws {
        try await api.withPublishedStudies { client, _, ios, android in
            let headers = WCPApp.headers(ios, language: "es")
            let (_, terms) = try await api.get(client, "/StudyMetaData/termsPolicy", headers)
            #expect(terms["terms"] as? String == "https://example.org/terms")
            #expect(terms["privacy"] as? String == "")

            let (_, info) = try await api.get(client, "/StudyMetaData/studyInfo?studyId=SLEEPWELL", headers)
            #expect(info["studyWebsite"] as? String == "https://sleepwell.example.org")
            let pages = try #require(info["info"] as? [[String: String]])
            #expect(pages.first == [
                "type": "video", "image": "https://sleepwell.example.org/1.png", "title": "Welcome",
                "text": "Thank you for your interest.", "videoLink": "https://sleepwell.example.org/intro.mp4",
            ])
            #expect(pages.last?["type"] == "image")
            #expect((info["withdrawalConfig"] as? [String: String]) == ["type": "ask_user", "message": "You may keep or delete your answers."])
            // The overview of an upcoming study is shown.
            #expect(try await api.get(client, "/StudyMetaData/studyInfo?studyId=IOSONLY", headers).0.status == .ok)

            let (_, resourcesReply) = try await api.get(client, "/StudyMetaData/resources?studyId=SLEEPWELL", headers)
            let resources = try #require(resourcesReply["resources"] as? [[String: Any]])
            #expect(resources.count == 2)
            #expect(resources[0]["type"] as? String == "pdf")
            #expect(resources[0]["audience"] as? String == "All")
            #expect(resources[0]["availability"] == nil)
            #expect(resources[1]["type"] as? String == "text")
            #expect(resources[1]["audience"] as? String == "Limited")
            #expect(resources[1]["notificationText"] as? String == "New sleep tips are available.")
            let window = try #require(resources[1]["availability"] as? [String: Any])
            #expect(window["availabilityType"] as? String == "AnchorDate")
            #expect(window["sourceType"] as? String == "EnrollmentDate")
            #expect(window["startDays"] as? Int == 7 && window["endDays"] as? Int == 90)
            #expect(window["startTime"] as? String == "09:00:00")
            let (_, upcoming) = try await api.get(client, "/StudyMetaData/resources?studyId=IOSONLY", headers)
            #expect((upcoming["resources"] as? [Any])?.isEmpty == true)

            let (_, dashboardReply) = try await api.get(
                client, "/StudyMetaData/studyDashboard?studyId=SLEEPWELL", WCPApp.headers(android, android: true))
            let dashboard = try #require(dashboardReply["dashboard"] as? [String: Any])
            let statistics = try #require(dashboard["statistics"] as? [[String: Any]])
            #expect(statistics.map { $0["title"] as? String } == ["avgSleep", "kickTotal"])
            let sleepSource = try #require(statistics[0]["dataSource"] as? [String: Any])
            #expect(sleepSource["type"] as? String == "questionnaire")
            #expect(sleepSource["key"] as? String == "sleepQuality")
            #expect((sleepSource["activity"] as? [String: String]) == ["activityId": "daily", "version": "1.0"])
            #expect(statistics[0]["calculation"] as? String == "Average")
            #expect((statistics[1]["dataSource"] as? [String: Any])?["type"] as? String == "task")
            let charts = try #require(dashboard["charts"] as? [[String: Any]])
            #expect(charts.map { $0["type"] as? String } == ["line-chart", "line-chart"])
            #expect(charts[0]["scrollable"] as? Bool == true)
            #expect((charts[0]["dataSource"] as? [String: Any])?["timeRangeType"] as? String == "hours_of_day")
            #expect((charts[1]["dataSource"] as? [String: Any])?["key"] as? String == "symptoms.severity")
            #expect((charts[0]["configuration"] as? [String: Any])?["subType"] as? String == "single")
        }
    }
}
