import Foundation
import InMemoryPorts
import ResponseCore
import StudyModels
import Testing

/// `ResponseReprocessing`'s rules: a chosen version is applied for every activity of the failed
/// responses before any is put back, and a version that cannot be used puts nothing back.
@Suite struct ResponseReprocessingRulesTests {
    static let study = StudyCatalog.Study(
        studyId: "SLEEP", key: "SLEEP", appId: "APP", status: .active, version: 3, collectionEnabled: true)

    /// Two failed responses of two activities, one processed response, and someone else's failure.
    static func responses() -> (InMemoryResponses, [Int64]) {
        let responses = InMemoryResponses()
        responses.enrol(.init(id: 1, studyKey: "SLEEP", studyId: "SLEEP", withdrawn: false, collectionEnabled: true), appToken: "a")
        responses.enrol(.init(id: 2, studyKey: "OTHER", studyId: "OTHER", withdrawn: false, collectionEnabled: true), appToken: "b")
        let ids = [
            responses.add(participantId: 1, activityId: "daily", version: "1.1", status: "error"),
            responses.add(participantId: 1, activityId: "weekly", version: "1.0", status: "error"),
            responses.add(participantId: 1, activityId: "daily", version: "1.1", status: "processed"),
            responses.add(participantId: 2, activityId: "daily", version: "1.1", status: "error"),
        ]
        return (responses, ids)
    }

    @Test func againstTheVersionEachWasSentForNoDesignIsAskedFor() async throws {
        let (responses, ids) = Self.responses()
        let designs = InMemoryDesigns()
        let outcome = try await ResponseReprocessing(responses: responses, designs: designs)
            .reprocess(ids, study: Self.study, actor: "admin@example.org", againstVersion: nil)
        #expect(outcome == ReprocessOutcome(countReprocessed: 2, notReprocessed: [ids[2], ids[3]]))
        #expect(designs.appliedVersions.isEmpty)
        #expect(responses.stored.map(\.status) == ["pending", "pending", "processed", "error"])
    }

    @Test func aMendedVersionIsAppliedForEveryActivityBeforeAnyResponseIsPutBack() async throws {
        let (responses, ids) = Self.responses()
        let designs = InMemoryDesigns()
        let outcome = try await ResponseReprocessing(responses: responses, designs: designs)
            .reprocess(ids, study: Self.study, actor: "admin@example.org", againstVersion: "1.2")
        #expect(outcome.countReprocessed == 2)
        #expect(designs.appliedVersions == ["daily@1.2", "weekly@1.2"])
        #expect(responses.stored.compactMap(\.againstVersion) == ["1.2", "1.2"])
    }

    @Test func aVersionThatCannotHoldAnswersIsRefusedAndPutsNothingBack() async throws {
        let (responses, ids) = Self.responses()
        let designs = InMemoryDesigns(["weekly@1.2": .cannotHoldAnswers("the date question 'when' has no kind")])
        await #expect(throws: ResponseAdminError.versionCannotBeProcessed(
            activityId: "weekly", version: "1.2", reason: "the date question 'when' has no kind")
        ) {
            try await ResponseReprocessing(responses: responses, designs: designs)
                .reprocess(ids, study: Self.study, actor: "admin@example.org", againstVersion: "1.2")
        }
        #expect(responses.reprocessCalls == 0)
        #expect(responses.stored.map(\.status) == ["error", "error", "processed", "error"])
    }

    @Test func studyMetadataNotAnsweringIsRefusedAndPutsNothingBack() async throws {
        let (responses, ids) = Self.responses()
        let designs = InMemoryDesigns(["daily@1.2": .unavailable])
        await #expect(throws: ResponseAdminError.designUnavailable("study-metadata did not answer")) {
            try await ResponseReprocessing(responses: responses, designs: designs)
                .reprocess(ids, study: Self.study, actor: "admin@example.org", againstVersion: "1.2")
        }
        #expect(responses.reprocessCalls == 0)
    }
}
