import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StudyModels
import Testing
import TestSupport

/// The open-ended JSON a study document carries (a step's `preLoadLogic`, a chart's
/// `configuration`) is built within one budget for the whole document (docs/security.md,
/// Budgets): any editor's draft of a few megabytes of `{"a":` cannot make study-metadata build a
/// hash table for each five bytes.
@Suite(.needsCluster) struct OpenEndedJSONBudgetTests {
    let helper = MetadataAdmin()

    /// `count` one-member objects in an array, as JSON text.
    static func objects(_ count: Int) -> String {
        "[" + Array(repeating: #"{"a":1}"#, count: count).joined(separator: ",") + "]"
    }

    @Test func aDraftWhoseOpenEndedFieldsBuildTooMuchIsRefusedAndChangesNothing() async throws {
        try await helper.withService { client, root, _ in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example).0 == .created)
            let (_, before) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)

            // 150,000 objects (300,001 values, 1 MB) in one step's preLoadLogic: past the budget.
            var document = try #require(try JSONSerialization.jsonObject(with: Data(example.utf8)) as? [String: Any])
            var activities = try #require(document["activities"] as? [[String: Any]])
            var steps = try #require(activities[0]["steps"] as? [[String: Any]])
            steps[0]["preLoadLogic"] = try JSONSerialization.jsonObject(with: Data(Self.objects(150_000).utf8))
            activities[0]["steps"] = steps
            document["activities"] = activities
            let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            let (status, reply) = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: body)
            #expect(status == .unprocessableContent, "\(String(buffer: reply).prefix(500))")
            #expect(String(buffer: reply).contains("more values than one document may hold (262144)"), "\(String(buffer: reply).prefix(500))")
            let (_, after) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            #expect(after == before, "nothing was saved")

            // Within the budget, the same field is kept as it was sent.
            steps[0]["preLoadLogic"] = try JSONSerialization.jsonObject(with: Data(Self.objects(10).utf8))
            activities[0]["steps"] = steps
            document["activities"] = activities
            let fine = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            #expect(try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: fine).0 == .ok)
        }
    }
}
