import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Synchronization
import Testing
import TestSupport

/// The signed endpoints other services read studies from, and real delivery of study events to a
/// live receiver through the outbox.
@Suite(.needsCluster) struct InternalStudyAPITests {
    let helper = MetadataAdmin()

    func signedGet(_ client: some TestClientProtocol, _ path: String, as caller: ServiceName = .response) async throws
        -> (HTTPResponse.Status, ByteBuffer)
    {
        try await client.execute(
            uri: path, method: .get, headers: TestApplication.signedHeaders(caller: caller, to: .studyMetadata, method: .get, path: path)
        ) { ($0.status, $0.body) }
    }

    @Test func otherServicesReadStudiesDesignsAndDocuments() async throws {
        try await helper.withService { client, root, _ in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)

            // Nothing published yet: an empty list.
            var (status, body) = try await signedGet(client, "/internal/v1/studies")
            #expect(status == .ok)
            #expect(try body.decodeJSON(StudyEventList.self).studies.isEmpty)

            _ = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root)
            // A second version changes the daily questionnaire only.
            let edited = example.replacingOccurrences(of: "How well did you sleep?", with: "How did you sleep?")
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root).0 == .ok)

            // Each route serves the caller that needs it, and no other.
            for path in ["/internal/v1/studies", "/internal/v1/studies/SLEEPWELL/versions/1/document"] {
                #expect(try await signedGet(client, path, as: .registration).0 == .forbidden, "\(path)")
            }
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/standing", as: .response).0 == .forbidden)
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/standing", as: .registration).0 == .ok)
            // What registration expands into runs: the newest version's zone, launch and activities.
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/schedule", as: .response).0 == .forbidden)
            #expect(try await signedGet(client, "/internal/v1/studies/NOSUCHSTUDY/schedule", as: .registration).0 == .notFound)
            let (scheduleStatus, scheduleBody) = try await signedGet(client, "/internal/v1/studies/SLEEPWELL/schedule", as: .registration)
            #expect(scheduleStatus == .ok)
            let scheduleDecoder = JSONDecoder()
            scheduleDecoder.dateDecodingStrategy = .iso8601
            let schedule = try scheduleDecoder.decode(StudySchedule.self, from: Data(buffer: scheduleBody))
            #expect((schedule.studyId, schedule.version, schedule.timeZone) == ("SLEEPWELL", 2, "America/New_York"))
            #expect(schedule.launchedAt != nil)
            #expect(schedule.activities.map(\.activityId).prefix(2) == ["daily", "weekly"])
            #expect(schedule.activities.allSatisfy { $0.steps.isEmpty }, "the schedule carries when runs open, not what they ask")
            (status, body) = try await signedGet(client, "/internal/v1/studies")
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let studies = try decoder.decode(StudyEventList.self, from: Data(buffer: body)).studies
            #expect(studies.map(\.studyId) == ["SLEEPWELL"])
            #expect(studies.first?.status == .active)
            #expect(studies.first?.version == 2)
            #expect(studies.first?.label == "1.1")
            #expect(studies.first?.activities.first { $0.activityId == "daily" }?.version == 2)
            #expect(studies.first?.activities.first { $0.activityId == "weekly" }?.version == 1)

            // Both versions of the daily design stay readable, by number or label.
            for (path, title) in [
                ("/internal/v1/studies/SLEEPWELL/activities/daily/versions/1", "How well did you sleep?"),
                ("/internal/v1/studies/SLEEPWELL/activities/daily/versions/1.1", "How did you sleep?"),
            ] {
                (status, body) = try await signedGet(client, path)
                #expect(status == .ok)
                let design = try body.decodeJSON(ActivityReply.self).activity
                #expect(design.metadata.activityId == "daily")
                #expect(design.steps.contains { $0.key == "sleepQuality" && $0.title?.text(for: nil) == title })
            }
            // The activity id in any case, as an app may spell it: the design with its own id.
            (status, body) = try await signedGet(client, "/internal/v1/studies/SLEEPWELL/activities/DAILY/versions/1.1")
            #expect(status == .ok)
            #expect(try body.decodeJSON(ActivityReply.self).activity.metadata.activityId == "daily")
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/activities/DAILY/versions/3").0 == .notFound)
            // Every step, whatever the platform: the active task is there.
            (status, body) = try await signedGet(client, "/internal/v1/studies/SLEEPWELL/activities/kicks/versions/1")
            #expect(try body.decodeJSON(ActivityReply.self).activity.type == "task")
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/activities/daily/versions/3").0 == .notFound)
            // A label nobody gave is not found; what cannot be a label is a bad request.
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/activities/daily/versions/x").0 == .notFound)
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/activities/daily/versions/a%20b").0 == .badRequest)

            (status, body) = try await signedGet(client, "/internal/v1/studies/SLEEPWELL/versions/1/document")
            #expect(status == .ok)
            #expect(try body.decodeJSON(StudyDocument.self) == JSONDecoder().decode(StudyDocument.self, from: Data(example.utf8)))
            #expect(try await signedGet(client, "/internal/v1/studies/SLEEPWELL/versions/9/document").0 == .notFound)

            // Unsigned, the apps' credential or an admin token get nowhere.
            let unsigned = try await client.execute(uri: "/internal/v1/studies", method: .get) { $0.status }
            #expect(unsigned == .unauthorized)
            let bearer = try await client.execute(
                uri: "/internal/v1/studies", method: .get, headers: [.authorization: "Bearer \(root)"]) { $0.status }
            #expect(bearer == .unauthorized)
        }
    }

    /// A launch reaches a live response service, signed, through the outbox worker once the
    /// transaction commits (waiting for a peer that is down is `OutboxTests`' subject).
    @Test func studyEventsReachALiveResponseServiceThroughTheOutbox() async throws {
        try await TestDatabase.withFreshDatabase { receiverDatabase in
            let receiver = try ResponseService.buildApplication(
                reader: TestConfiguration.reader(for: .response, databaseURL: receiverDatabase), logger: Logger(label: "receiver"))
            try await receiver.test(.live) { receiverClient in
                try await TestApplication.waitUntilReady(receiverClient)
                let receiverURL = "http://127.0.0.1:\(receiverClient.port!)"
                try await TestDatabase.withFreshDatabase { url in
                    let reader = TestConfiguration.reader(
                        for: .studyMetadata, databaseURL: url,
                        overrides: [
                            "studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!",
                            "response.url": receiverURL,
                        ])
                    let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "sender"))
                    try await app.test(.router) { client in
                        try await TestApplication.waitUntilReady(client)
                        let root = try await helper.login(client, "root@studystack.test", "Sup3r-Secret!")
                        _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
                        let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
                        _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
                        #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)

                        // The response service keeps the event (it takes it from study-metadata only).
                        let stored = try await TestDatabase.withClient(url: receiverDatabase) { postgres, logger in
                            try await eventually("the study event delivered", within: .seconds(20)) {
                                var rows: [(String, String, String)] = []
                                for try await row in try await postgres.query(
                                    "SELECT study_id, status, event->>'action' FROM studies", logger: logger
                                ).decode((String, String, String).self) { rows.append(row) }
                                return rows
                            } until: { !$0.isEmpty }
                        }
                        #expect(stored.count == 1)
                        #expect(stored.first?.0 == "SLEEPWELL")
                        #expect(stored.first?.1 == "active")
                        #expect(stored.first?.2 == "launch")
                        // The outbox marks it delivered once the response service has answered.
                        _ = try await eventually("the study event marked delivered", within: .seconds(20)) {
                            String(buffer: try await helper.send(client, .get, "/admin/v1/outbox?undelivered=true", token: root).1)
                        } until: { !$0.contains("study-events") }
                    }
                }
            }
        }
    }
}
