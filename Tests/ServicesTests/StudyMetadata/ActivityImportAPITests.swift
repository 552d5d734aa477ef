import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StudyModels
import Testing
import TestSupport

/// The original LabKey server's survey designs, imported through the admin API one by one in the
/// apps' own JSON, launched, and served back by `/StudyMetaData/activity` with the same steps.
@Suite(.needsCluster) struct ActivityImportAPITests {
    let helper = MetadataAdmin()
    let api = WCPApp()

    /// An activity id from a design's file name (`NewStudy_Survey-1.json` → `NewStudy_Survey-1`).
    static func activityId(_ url: URL) -> String {
        String(url.deletingPathExtension().lastPathComponent.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }.prefix(64))
    }

    @Test func everyLabKeyDesignImportsAndIsServedBackTheSame() async throws {
        try await api.withPublishedStudies { client, root, ios, _ in
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
                .replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "LABKEY""#)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/LABKEY/draft", token: root, body: example).0 == .created)

            var imported: [(String, Data)] = []
            for url in Conformance.labKeySurveyDesigns {
                let data = try Data(contentsOf: url)
                let id = Self.activityId(url)
                let (status, body) = try await helper.send(
                    client, .put, "/admin/v1/studies/LABKEY/draft/activities/\(id)", token: root,
                    body: String(decoding: data, as: UTF8.self))
                if url.lastPathComponent == Conformance.malformedDesign {
                    // The one the original suite keeps broken on purpose: a clear parse error.
                    #expect(status == .unprocessableContent)
                    let problem = try body.decodeJSON(MetadataAdmin.Problems.self).error.problems?.first
                    #expect(problem?.pointer == "")
                    #expect(problem?.message.hasPrefix("activity is not valid JSON") == true)
                    continue
                }
                #expect(status == .created, "\(url.lastPathComponent): \(String(buffer: body))")
                imported.append((id, data))
            }
            #expect(imported.count == Conformance.labKeySurveyDesigns.count - 1)
            let (launch, launchBody) = try await helper.send(client, .post, "/admin/v1/studies/LABKEY/launch", token: root)
            #expect(launch == .ok, "\(String(buffer: launchBody))")

            for (id, data) in imported {
                let served = try await client.execute(
                    uri: "/StudyMetaData/activity?studyId=LABKEY&activityId=\(id)", method: .get,
                    headers: WCPApp.headers(ios)
                ) { response in
                    #expect(response.status == .ok, "\(id)")
                    return try JSONDecoder().decode(JSONValue.self, from: Data(buffer: response.body))
                }
                let original = try JSONDecoder().decode(JSONValue.self, from: data)
                guard case .object(let envelope) = original, case .object(let activity)? = envelope["activity"],
                    case .array(let originalSteps)? = activity["steps"],
                    case .object(let reply) = served, case .object(let servedActivity)? = reply["activity"],
                    case .array(let servedSteps)? = servedActivity["steps"]
                else {
                    Issue.record("\(id): unexpected shape")
                    continue
                }
                #expect(StepComparison.differences(originalSteps, servedSteps, path: "\(id)/steps") == [])
            }
        }
    }

    @Test func anImportedActivityIsCheckedAndKeepsItsSchedule() async throws {
        try await api.withPublishedStudies { client, root, _, _ in
            let design = #"{"activity": {"type": "questionnaire", "metadata": {"name": "Mood"}, "steps": [{"type": "question", "resultType": "boolean", "key": "ok", "title": "OK?"}]}}"#
            let path = "/admin/v1/studies/SLEEPWELL/draft/activities/mood"
            var (status, body) = try await helper.send(client, .put, path, token: root, body: design)
            #expect(status == .created)
            let frequency = { (body: ByteBuffer) -> String? in
                let reply = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                return ((reply?["activity"] as? [String: Any])?["schedule"] as? [String: Any])?["frequency"] as? String
            }
            #expect(frequency(body) == "oneTime")
            #expect(String(buffer: body).contains(#""title":"Mood""#))
            // Marked as the import's placeholder until the team chooses a schedule.
            #expect(String(buffer: body).contains(#""placeholderSchedule":true"#))

            // Replacing it keeps the schedule the draft gave it.
            let (_, draft) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            let weekly = try JSONSerialization.jsonObject(with: Data(buffer: draft)) as! [String: Any]
            var document = weekly
            var activities = document["activities"] as! [[String: Any]]
            let index = activities.firstIndex { $0["activityId"] as? String == "mood" }!
            activities[index]["schedule"] = ["frequency": "manual", "runs": [["start": "2030-01-01T09:00", "end": "2030-01-02T09:00"]]]
            activities[index]["placeholderSchedule"] = nil
            document["activities"] = activities
            let edited = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: edited).0 == .ok)
            (status, body) = try await helper.send(client, .put, path, token: root, body: design)
            #expect(status == .ok)
            #expect(frequency(body) == "manual")
            #expect(!String(buffer: body).contains("placeholderSchedule"), "a chosen schedule stays chosen")

            // A duplicate key is located in the body; nothing changes.
            let duplicate = design.replacingOccurrences(
                of: #""steps": [{"#, with: #""steps": [{"type": "question", "resultType": "boolean", "key": "ok", "title": "Again"}, {"#)
            (status, body) = try await helper.send(client, .put, path, token: root, body: duplicate)
            #expect(status == .unprocessableContent)
            #expect(try body.decodeJSON(MetadataAdmin.Problems.self).error.problems?.map(\.pointer) == ["/activity/steps/1/key"])
            let (_, after) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            #expect(!String(buffer: after).contains("Again"))

            // A choice question without choices imports (the original servers' own test designs have
            // them) with a warning located in the body.
            let bare = #"{"activity": {"metadata": {"name": "Bare"}, "steps": [{"type": "question", "resultType": "textChoice", "key": "pick", "title": "Pick"}]}}"#
            (status, body) = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft/activities/bare", token: root, body: bare)
            #expect(status == .created)
            let warnings = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            #expect((warnings?["warnings"] as? [[String: String]]) == [
                ["pointer": "/activity/steps/0/format", "message": "it is a text choice question with no choices"]
            ])

            // A wrongly typed field is located too; the id in the path is checked; roles apply.
            (status, body) = try await helper.send(
                client, .put, path, token: root, body: design.replacingOccurrences(of: #""key": "ok""#, with: #""key": 7"#))
            #expect(status == .unprocessableContent)
            #expect(try body.decodeJSON(MetadataAdmin.Problems.self).error.problems?.first?.pointer == "/activity/steps/0/key")
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft/activities/no%20way", token: root, body: design).0
                == .unprocessableContent)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/NOSTUDY/draft/activities/mood", token: root, body: design).0 == .notFound)
            let (_, viewer) = try await helper.makeAdmin(client, root: root, email: "viewer@studystack.test")
            #expect(try await helper.send(client, .put, path, token: viewer, body: design).0 == .forbidden)
        }
    }
}

/// A study's app is fixed once it has been published.
@Suite(.needsCluster) struct StudyAppTests {
    let helper = MetadataAdmin()
    let api = WCPApp()

    @Test func thePublishedStudysAppCannotChange() async throws {
        try await api.withPublishedStudies { client, root, _, _ in
            let other = MetadataAdmin.demoApp.replacingOccurrences(of: "DEMOAPP", with: "OTHERAPP")
            #expect(try await helper.send(client, .post, "/admin/v1/apps", token: root, body: other).0 == .created)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            let moved = example.replacingOccurrences(of: #""appId": "DEMOAPP""#, with: #""appId": "OTHERAPP""#)
            let (status, body) = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: moved)
            #expect(status == .unprocessableContent)
            let problems = try body.decodeJSON(MetadataAdmin.Problems.self).error.problems
            #expect(problems?.map(\.pointer) == ["/appId"])
            #expect(problems?.first?.message == "must stay DEMOAPP: the study has been published in that app")
            // A study never published may still move.
            let hidden = moved.replacingOccurrences(of: #""studyId": "SLEEPWELL""#, with: #""studyId": "HIDDEN""#)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/HIDDEN/draft", token: root, body: hidden).0 == .ok)
        }
    }
}
