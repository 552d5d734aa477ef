import Foundation
import Testing
import TestSupport

/// The check-list before publishing runs the check publishing makes: a question the study's
/// tables could not store answers to needs attention, named, with a link to its step.
@Suite(.needsCluster) struct ConsoleStorageCheckTests {
    /// The example study's `baseline` activity, with its date question's kind left out.
    static func activityWithoutKind() throws -> Any {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/examples/complete-study.json")
        let example = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let activities = try #require(example["activities"] as? [[String: Any]])
        var baseline = try #require(activities.first { $0["activityId"] as? String == "baseline" })
        var steps = try #require(baseline["steps"] as? [[String: Any]])
        try #require(steps.count == 1)
        steps[0]["format"] = [String: Any]()
        baseline["steps"] = steps
        return baseline
    }

    @Test func aQuestionWhoseAnswersCannotBeStoredNeedsAttentionWithALinkToItsStep() async throws {
        try await ConsoleFixture.run { fixture in
            var document = try await fixture.draft().json
            document["activities"] = [try Self.activityWithoutKind()]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
            let (saved, savedBody, _) = try await ConsoleFixture.send(
                fixture.metadata, .put, "/admin/v1/studies/CONSOLE1/draft", token: fixture.rootToken, body: body)
            try #require(saved == .ok, "\(String(buffer: savedBody))")

            let browser = fixture.browser
            try await browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let summary = try await browser.get("/studies/CONSOLE1")
            #expect(summary.status == .ok)
            #expect(summary.html.contains("Publish and Launch are refused until every section marked"))
            #expect(summary.html.contains("could not be stored: the date question"))
            #expect(summary.html.contains("has no kind (Date, or Date and time)"))
            #expect(summary.html.contains(#"href="/studies/CONSOLE1/activities/baseline/steps/diagnosisDate">Go to the step</a>"#))
            let actions = try await browser.get("/studies/CONSOLE1/actions")
            #expect(actions.html.contains(#"href="/studies/CONSOLE1/activities/baseline/steps/diagnosisDate">Go to the step</a>"#))
        }
    }
}
