import Foundation
import Logging
import PostgresNIO
import Testing
import TestSupport

/// Where the response service behaves as the original LabKey server did for the apps, end to end
/// with study-metadata live: the design fetched from it, the response stored in the study's table.
@Suite struct ResponseFidelityTests {
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
}
