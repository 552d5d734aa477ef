import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// A study whose answers cannot be stored never goes out: publishing for testing, launching and
/// publishing updates ask the response service to store a response to every activity first
/// (rolled back), and refuse with the activity and the step.
@Suite(.needsCluster) struct StorageCheckTests {
    let helper = MetadataAdmin()

    func act(_ client: some TestClientProtocol, _ action: String, token: String) async throws -> (HTTPResponse.Status, JSONValue) {
        let (status, body) = try await helper.send(client, .post, "/admin/v1/studies/SLEEPWELL/\(action)", token: token)
        return (status, (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body))) ?? .null)
    }

    func problems(_ reply: JSONValue) -> [(pointer: String, message: String)] {
        guard case .array(let problems)? = reply["error"]?["problems"] else { return [] }
        return problems.map { ($0["pointer"]?.text ?? "", $0["message"]?.text ?? "") }
    }

    func status(_ client: some TestClientProtocol, token: String) async throws -> JSONValue {
        let (_, body) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL", token: token)
        return try JSONDecoder().decode(JSONValue.self, from: Data(buffer: body))
    }

    func versions(_ client: some TestClientProtocol, token: String) async throws -> Int {
        let (_, body) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/versions", token: token)
        let reply = try JSONDecoder().decode(JSONValue.self, from: Data(buffer: body))
        if case .array(let versions) = reply { return versions.count }
        if case .array(let versions)? = reply["versions"] { return versions.count }
        return -1
    }

    static let example = { try! String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8) }()
    static let dateWithoutKind = example.replacingOccurrences(
        of: #""format": {"style": "Date-Time", "dateRange": "untilCurrent"}"#, with: #""format": {"dateRange": "untilCurrent"}"#)

    /// The issue's case: a date question saved without its kind. Publishing, launching and
    /// publishing an update are each refused with the step, nothing frozen; mended, it goes out.
    @Test func aDateQuestionWithoutItsKindKeepsTheStudyFromGoingOut() async throws {
        #expect(Self.dateWithoutKind != Self.example)
        try await helper.withService { client, root, _ in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let (saved, _) = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: Self.dateWithoutKind)
            #expect(saved == .created, "the editor lets the kind be left out; publishing is where it is caught")
            for action in ["publish", "launch"] {
                let (refused, reply) = try await act(client, action, token: root)
                #expect(refused == .unprocessableContent, "\(action)")
                let found = problems(reply)
                try #require(found.count == 1, "\(action)")
                #expect(found[0].pointer == "/activities/0/steps/10")
                #expect(found[0].message == "answers to daily could not be stored: the date question 'lastAlcohol' has no kind (Date, or Date and time)")
            }
            let study = try await status(client, token: root)
            #expect(study["status"]?.text == "pre_launch")
            #expect(try await versions(client, token: root) == 0, "no version was frozen")

            // Mended, it launches; the same fault brought back by an update is refused too.
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: Self.example).0 == .ok)
            #expect(try await act(client, "launch", token: root).0 == .ok)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: Self.dateWithoutKind).0 == .ok)
            let (refused, reply) = try await act(client, "publish-updates", token: root)
            #expect(refused == .unprocessableContent)
            #expect(problems(reply).map(\.pointer) == ["/activities/0/steps/10"])
        }
    }

    /// A question inside a form is pointed at within its form.
    @Test func aQuestionOfAFormIsNamedInItsForm() async throws {
        let draft = Self.example.replacingOccurrences(
            of: #"{"type": "question", "resultType": "numeric", "key": "hoursSlept", "title": "Average hours slept this week", "format": {"style": "Decimal", "unit": "hours"}}"#,
            with: #"{"type": "form", "resultType": "grouped", "key": "nights", "title": "Nights", "repeatable": true, "steps": [{"type": "question", "resultType": "numeric", "key": "hoursSlept", "title": "Hours slept", "format": {"unit": "hours"}}]}"#)
        #expect(draft != Self.example)
        try await helper.withService { client, root, _ in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let (saved, savedBody) = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: draft)
            try #require(saved == .created, "\(String(buffer: savedBody))")
            let (refused, reply) = try await act(client, "publish", token: root)
            #expect(refused == .unprocessableContent)
            let found = problems(reply)
            try #require(found.count == 1)
            #expect(found[0].pointer == "/activities/1/steps/0/steps/0")
            #expect(found[0].message.contains("the number question 'hoursSlept' has no style (Integer or Decimal)"))
        }
    }

    /// A version is never frozen unchecked: with no response service to ask, publishing is
    /// refused as unavailable, and nothing changes.
    @Test func withNoResponseServiceToAskNothingIsPublished() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .studyMetadata, databaseURL: url,
                overrides: ["studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!"])
            let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "unchecked"))
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                let root = try await helper.login(client, "root@studystack.test", "Sup3r-Secret!")
                _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
                _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: Self.example)
                let (refused, reply) = try await act(client, "publish", token: root)
                #expect(refused == .serviceUnavailable)
                #expect(reply["error"]?["code"]?.text == "unavailable")
                #expect(reply["error"]?["message"]?.text?.contains("could not be checked now") == true)
                let study = try await status(client, token: root)
                #expect(study["status"]?.text == "pre_launch")
                #expect(try await versions(client, token: root) == 0)
            }
        }
    }
}
