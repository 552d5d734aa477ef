import Foundation
import HTTPTypes
import HummingbirdTesting
import StudyModels
import Testing
import TestSupport

/// The lifecycle through the admin API: guards, roles, immutable versions.
@Suite(.needsCluster) struct StudyLifecycleTests {
    let helper = MetadataAdmin()

    func act(_ client: some TestClientProtocol, _ action: String, token: String) async throws -> (HTTPResponse.Status, [String: Any]) {
        let (status, body) = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/\(action)", token: token)
        return (status, (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:])
    }

    @Test func aStudyIsPublishedLaunchedUpdatedPausedResumedAndDeactivated() async throws {
        try await helper.withService { client, root, _ in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)

            // An editor may edit but not launch.
            let (editorId, editor) = try await helper.makeAdmin(client, root: root, email: "editor@studystack.test")
            _ = try await helper.send(
                client, .put, "/admin/v1/studies/SLEEPWELL/roles/\(editorId)", token: root, body: #"{"role":"editor"}"#)
            let (refused, refusal) = try await act(client, "launch", token: editor)
            #expect(refused == .forbidden)
            #expect((refusal["error"] as? [String: Any])?["message"] as? String == "this needs the study_admin role on study SLEEPWELL")

            // Publish as upcoming freezes version 1.0; unpublish and launch.
            let (published, publishBody) = try await act(client, "publish", token: root)
            #expect(published == .ok)
            #expect(publishBody["status"] as? String == "upcoming")
            #expect((publishBody["version"] as? [String: Any])?["label"] as? String == "1.0")
            #expect(try await act(client, "pause", token: root).0 == .conflict)
            #expect(try await act(client, "unpublish", token: root).1["status"] as? String == "pre_launch")
            let (_, launched) = try await act(client, "launch", token: root)
            #expect(launched["status"] as? String == "active")
            #expect(launched["version"] == nil, "the draft did not change, so no new version")
            let (unchanged, unchangedBody) = try await act(client, "publish-updates", token: root)
            #expect(unchanged == .conflict)
            #expect(String(describing: unchangedBody).contains("has not changed"))

            // The editor changes one activity; the study admin publishes the update.
            let edited = example.replacingOccurrences(of: #""title": "Weekly survey""#, with: #""title": "Weekly sleep survey""#)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: editor, body: edited).0 == .ok)
            let (_, update) = try await act(client, "publish-updates", token: root)
            let v2 = try #require(update["version"] as? [String: Any])
            #expect(v2["label"] as? String == "1.1")
            #expect(v2["consentVersion"] as? Int == 1)
            #expect((v2["activityVersions"] as? [String: Int])?["weekly"] == 2)
            #expect((v2["activityVersions"] as? [String: Int])?["daily"] == 1)
            #expect((v2["changes"] as? [String: Bool]) == ["consent": false, "activities": true, "resources": false, "info": false, "reconsent": false])

            // A consent change moves the consent version.
            let reconsent = edited.replacingOccurrences(of: "I agree to take part.", with: "I agree to take part in Sleep Well.")
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: reconsent)
            // The team says whether those who signed must sign again (ReconsentAPITests).
            #expect(try await act(client, "publish-updates", token: root).0 == .badRequest)
            let (_, consentUpdate) = try await act(client, "publish-updates?reconsent=false", token: root)
            #expect((consentUpdate["version"] as? [String: Any])?["consentVersion"] as? Int == 2)

            #expect(try await act(client, "pause", token: root).1["status"] as? String == "paused")
            #expect(try await act(client, "pause", token: root).0 == .conflict)
            #expect(try await act(client, "resume", token: root).1["status"] as? String == "active")
            #expect(try await act(client, "deactivate", token: root).1["status"] as? String == "deactivated")
            #expect(try await act(client, "launch", token: root).0 == .conflict)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example).0 == .conflict)
            #expect(try await act(client, "relaunch", token: root).0 == .notFound)

            // Every version stays readable as it was frozen.
            let (_, list) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/versions", token: editor)
            let versions = try #require((try JSONSerialization.jsonObject(with: Data(buffer: list)) as? [String: Any])?["versions"] as? [[String: Any]])
            #expect(versions.map { $0["label"] as? String } == ["1.0", "1.1", "1.2"])
            let (_, first) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/versions/1", token: root)
            let (_, second) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/versions/2", token: root)
            #expect(try JSONDecoder().decode(StudyDocument.self, from: Data(buffer: first)).activities[1].title == "Weekly survey")
            #expect(try JSONDecoder().decode(StudyDocument.self, from: Data(buffer: second)).activities[1].title == "Weekly sleep survey")
            #expect(try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/versions/9", token: root).0 == .notFound)

            // Each action is audited with the version it froze.
            let (_, audit) = try await helper.send(client, .get, "/admin/v1/audit?studyId=SLEEPWELL", token: root)
            let events = (try JSONSerialization.jsonObject(with: Data(buffer: audit)) as? [String: Any])?["events"] as? [[String: Any]] ?? []
            let actions = events.map { $0["action"] as? String ?? "" }
            for expected in ["study.publish", "study.unpublish", "study.launch", "study.publish-updates", "study.pause",
                             "study.resume", "study.deactivate"] {
                #expect(actions.contains(expected), "\(expected)")
            }
            #expect(events.contains { $0["action"] as? String == "study.publish" && $0["studyVersion"] as? Int == 1 })
        }
    }
}
