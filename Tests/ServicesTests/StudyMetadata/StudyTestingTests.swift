import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// A study published for testing: served only to the app's test builds, and what testers were
/// sent forgotten when it launches.
@Suite(.needsCluster) struct StudyTestingTests {
    let helper = MetadataAdmin()
    let app = WCPApp()

    func json(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any]) ?? [:]
    }

    func listed(_ client: some TestClientProtocol, _ credential: String) async throws -> [String] {
        let (head, body) = try await app.get(client, "/StudyMetaData/studyList", WCPApp.headers(credential))
        #expect(head.status == .ok)
        return ((body["studies"] as? [[String: Any]]) ?? []).compactMap { $0["studyId"] as? String }
    }

    @Test func onlyATestBuildSeesAStudyInTestingAndLaunchForgetsWhatTestersWereSent() async throws {
        try await helper.withService { client, root, url in
            let (_, created) = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let live = try #require(json(created)["credentials"] as? [String: String])["ios"]!
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)

            // Testing credentials are a super-admin's to issue, for an app that exists.
            let (_, editor) = try await helper.makeAdmin(client, root: root, email: "editor@studystack.test")
            #expect(try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/testing-credentials", token: editor).0 == .forbidden)
            #expect(try await helper.send(client, .post, "/admin/v1/apps/NOAPP/testing-credentials", token: root).0 == .notFound)
            let (issuedStatus, issuedBody) = try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/testing-credentials", token: root)
            #expect(issuedStatus == .created)
            let first = try #require(json(issuedBody)["credentials"] as? [String: String])
            #expect(Set(first.keys) == ["ios", "android"])

            let (published, body) = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-for-testing", token: root)
            #expect(published == .ok)
            #expect(json(body)["status"] as? String == "testing")
            #expect((json(body)["version"] as? [String: Any])?["label"] as? String == "1.0")

            // The live build never sees it: not listed, and every call about it is answered as
            // for a study that does not exist.
            #expect(try await listed(client, live) == [])
            for path in ["study", "studyInfo", "activityList", "consentDocument?consentVersion=", "resources"] {
                let separator = path.contains("?") ? "&" : "?"
                let (head, _) = try await app.get(client, "/StudyMetaData/\(path)\(separator)studyId=SLEEPWELL", WCPApp.headers(live))
                #expect(head.status == .notFound, "\(path)")
            }
            // The test build sees it as the live build will once it launches.
            let (_, list) = try await app.get(client, "/StudyMetaData/studyList", WCPApp.headers(first["ios"]!))
            let studies = try #require(list["studies"] as? [[String: Any]])
            try #require(studies.count == 1)
            #expect(studies[0]["studyId"] as? String == "SLEEPWELL")
            #expect(studies[0]["status"] as? String == "Active")
            #expect(try await app.get(client, "/StudyMetaData/activityList?studyId=SLEEPWELL", WCPApp.headers(first["ios"]!)).0.status == .ok)

            // Issuing again retires the credentials before.
            let (_, again) = try await helper.send(client, .post, "/admin/v1/apps/DEMOAPP/testing-credentials", token: root)
            let second = try #require(json(again)["credentials"] as? [String: String])
            #expect(try await app.get(client, "/StudyMetaData/studyList", WCPApp.headers(first["ios"]!)).0.status == .unauthorized)
            #expect(try await listed(client, second["ios"]!) == ["SLEEPWELL"])

            // Testers were sent the welcome; launch forgets it, so it is sent again to everyone.
            try await TestDatabase.withClient(url: url) { postgres, logger in
                let rows = try await postgres.query(
                    "UPDATE notifications SET sent_at = now() WHERE study_id = 'SLEEPWELL' AND origin = 'study' RETURNING notification_id",
                    logger: logger)
                #expect(try await rows.decode(String.self).collect().contains("welcome"))
            }
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish", token: root).0 == .conflict)
            let (launched, launchBody) = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root)
            #expect(launched == .ok)
            #expect(json(launchBody)["status"] as? String == "active")
            #expect(try await listed(client, live) == ["SLEEPWELL"])
            try await TestDatabase.withClient(url: url) { postgres, logger in
                let rows = try await postgres.query(
                    "SELECT notification_id, sent_at IS NULL FROM notifications WHERE study_id = 'SLEEPWELL' AND origin = 'study'",
                    logger: logger)
                let found = try await rows.decode((String, Bool).self).collect()
                try #require(found.count == 2)
                #expect(Set(found.map(\.0)) == ["welcome", "midpoint"])
                #expect(found.allSatisfy { $0.1 }, "none sent yet")
                let audit = try await postgres.query(
                    "SELECT details->>'testDataRemoved' FROM audit_events WHERE action = 'study.launch' AND study_id = 'SLEEPWELL'",
                    logger: logger)
                #expect(try await audit.decode(String?.self).collect() == ["true"])
            }
            // The registration service is told to forget what testers left there.
            let (_, outbox) = try await helper.send(client, .get, "/admin/v1/outbox?undelivered=true", token: root)
            #expect(String(buffer: outbox).contains("/internal/v1/studies/SLEEPWELL/testing-ended"))
        }
    }

    @Test func testingEndsBackInTheDraftAndNothingElseLeavesTesting() async throws {
        try await helper.withService { client, root, _ in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/end-testing", token: root).0 == .conflict)
            #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-for-testing", token: root).0 == .ok)
            for action in ["pause", "unpublish", "deactivate", "publish-for-testing"] {
                #expect(try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/\(action)", token: root).0 == .conflict, "\(action)")
            }
            // An update while testing is a new version the testers fetch.
            let edited = example.replacingOccurrences(of: #""title": "Weekly survey""#, with: #""title": "Weekly sleep survey""#)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited)
            let (_, update) = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish-updates", token: root)
            #expect(json(update)["status"] as? String == "testing")
            #expect((json(update)["version"] as? [String: Any])?["label"] as? String == "1.1")
            let (ended, body) = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/end-testing", token: root)
            #expect(ended == .ok)
            #expect(json(body)["status"] as? String == "pre_launch")
            let (_, outbox) = try await helper.send(client, .get, "/admin/v1/outbox?undelivered=true", token: root)
            #expect(String(buffer: outbox).contains("/internal/v1/studies/SLEEPWELL/testing-ended"))
        }
    }
}
