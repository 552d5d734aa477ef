import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StudyModels
import Testing
import TestSupport

/// Saving a draft over what was read: its revision as `ETag`, `If-Match` and `If-None-Match: *`,
/// so two editors never overwrite each other unseen and a creation never replaces a study.
@Suite(.needsCluster) struct DraftRevisionTests {
    let admin = MetadataAdmin()

    func draft(_ client: some TestClientProtocol, _ root: String) async throws -> (etag: String?, body: String) {
        try await client.execute(
            uri: "/admin/v1/studies/SLEEPWELL/draft", method: .get, headers: [.authorization: "Bearer \(root)"]
        ) { response in
            #expect(response.status == .ok)
            return (response.headers[.eTag], String(buffer: response.body))
        }
    }

    func put(
        _ client: some TestClientProtocol, _ root: String, _ body: String, _ header: (HTTPField.Name, String)?
    ) async throws -> (HTTPResponse.Status, String) {
        var headers: HTTPFields = [.authorization: "Bearer \(root)"]
        if let header { headers[header.0] = header.1 }
        return try await client.execute(
            uri: "/admin/v1/studies/SLEEPWELL/draft", method: .put, headers: headers, body: ByteBuffer(string: body)
        ) { ($0.status, String(buffer: $0.body)) }
    }

    @Test func aSaveOverAnOlderRevisionIsRefusedAndChangesNothing() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            #expect(try await put(client, root, example, nil).0 == .created)
            let first = try await draft(client, root)
            #expect(first.etag == "\"1\"")

            // Two editors read revision 1; the first save wins and moves the revision on.
            let renamed = example.replacingOccurrences(of: "\"enrolling\": true", with: "\"enrolling\": false")
            #expect(renamed != example)
            #expect(try await put(client, root, renamed, (.ifMatch, "\"1\"")).0 == .ok)
            #expect(try await draft(client, root).etag == "\"2\"")
            let (stale, message) = try await put(client, root, example, (.ifMatch, "\"1\""))
            #expect(stale == .preconditionFailed)
            #expect(message.contains("draft_changed"))
            #expect(message.contains("revision 2"))
            let after = try await draft(client, root)
            #expect(after.etag == "\"2\"")
            #expect(try JSONDecoder().decode(StudyDocument.self, from: Data(after.body.utf8)).enrolling == false)

            // A weak validator names the same revision; garbage is refused before anything.
            #expect(try await put(client, root, example, (.ifMatch, "W/\"2\"")).0 == .ok)
            for garbage in ["2", "\"two\"", "\"0\"", "\"-1\"", "*"] {
                #expect(try await put(client, root, example, (.ifMatch, garbage)).0 == .badRequest, "If-Match \(garbage)")
            }
            #expect(try await draft(client, root).etag == "\"3\"")

            // The study's summary carries the same revision.
            let (status, summary) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL", token: root)
            #expect(status == .ok)
            let decoded = try JSONDecoder.iso8601.decode(StudySummary.self, from: Data(buffer: summary))
            #expect(decoded.draftRevision == 3)
            #expect(decoded.status == .preLaunch)
            #expect(decoded.role == .studyAdmin)  // a super-admin holds every role
            #expect(try await admin.send(client, .get, "/admin/v1/studies/NOSUCH", token: root).0 == .notFound)
            // A path names the study as the client meant it: no percent-encoding in the answer.
            let (typed, answer) = try await admin.send(client, .get, "/admin/v1/studies/UX3%20sleep%20study/draft", token: root)
            #expect(typed == .notFound)
            #expect(String(buffer: answer).contains("no study UX3 sleep study"), "\(String(buffer: answer))")
            #expect(!String(buffer: answer).contains("%20"))
        }
    }

    @Test func createOnlyNeverReplacesAStudy() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            #expect(try await put(client, root, example, (.ifNoneMatch, "*")).0 == .created)
            let (status, message) = try await put(client, root, example, (.ifNoneMatch, "*"))
            #expect(status == .preconditionFailed)
            #expect(message.contains("study_exists"))
            #expect(try await draft(client, root).etag == "\"1\"")
            #expect(try await put(client, root, example, (.ifNoneMatch, "\"1\"")).0 == .badRequest)
        }
    }

    @Test func anUnfinishedConsentSavesWithAWarningAndCannotBePublished() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let unfinished = #"{"studyId":"SLEEPWELL","appId":"DEMOAPP","name":"Sleep","timeZone":"UTC","eligibility":{"type":"token"},"consent":{}}"#
            let (status, body) = try await put(client, root, unfinished, nil)
            #expect(status == .created)
            #expect(body.contains("/consent/visualScreens"))
            #expect(body.contains("before publishing"))
            for action in ["publish", "launch"] {
                let (refused, reply) = try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/\(action)", token: root)
                #expect(refused == .unprocessableContent, "\(action)")
                #expect(String(buffer: reply).contains("/consent/visualScreens"))
            }
            let (_, list) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL", token: root)
            #expect(String(buffer: list).contains(#""status":"pre_launch""#))
        }
    }
}

extension JSONDecoder {
    static let iso8601: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// What the lifecycle fixes once a study has launched: participants joined by its eligibility.
@Suite(.needsCluster) struct LaunchedStudyRuleTests {
    let admin = MetadataAdmin()

    @Test func theEligibilityTypeCannotChangeAfterLaunchButCanBefore() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            #expect(example.contains(#""type": "combined""#))
            let tokenOnly = try Self.withTokenEligibility(example)
            // Before launch (and while only upcoming) the type may change.
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example).0 == .created)
            #expect(try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/publish", token: root).0 == .ok)
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: tokenOnly).0 == .ok)
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example).0 == .ok)
            #expect(try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
            for action in ["", "pause"] {
                if !action.isEmpty {
                    #expect(try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/\(action)", token: root).0 == .ok)
                }
                let (status, body) = try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: tokenOnly)
                #expect(status == .unprocessableContent)
                #expect(String(buffer: body).contains("/eligibility/type"))
                #expect(String(buffer: body).contains("must stay combined"))
            }
            let (_, draft) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            #expect(try JSONDecoder().decode(StudyDocument.self, from: Data(buffer: draft)).eligibility.type == .combined)
        }
    }

    static func withTokenEligibility(_ json: String) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var eligibility = try #require(object["eligibility"] as? [String: Any])
        eligibility["type"] = "token"
        eligibility["questions"] = []
        object["eligibility"] = eligibility
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}
