import Foundation
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing

/// The lifecycle's pure rules: transitions, version counters, the publish guard.
@Suite struct StudyLifecycleRuleTests {
    static func example() throws -> StudyDocument {
        try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: MetadataAdmin.exampleURL))
    }

    @Test func transitionsFollowTheOriginalStateMachine() {
        #expect(LifecycleAction.publish.next(from: .preLaunch) == .upcoming)
        #expect(LifecycleAction.unpublish.next(from: .upcoming) == .preLaunch)
        #expect(LifecycleAction.launch.next(from: .upcoming) == .active)
        #expect(LifecycleAction.launch.next(from: .preLaunch) == .active)
        #expect(LifecycleAction.publishUpdates.next(from: .paused) == .paused)
        #expect(LifecycleAction.pause.next(from: .active) == .paused)
        #expect(LifecycleAction.resume.next(from: .paused) == .active)
        #expect(LifecycleAction.deactivate.next(from: .active) == .deactivated)
        for action in LifecycleAction.allCases { #expect(action.next(from: .deactivated) == nil, "\(action)") }
        #expect(LifecycleAction.launch.next(from: .active) == nil)
        #expect(LifecycleAction.pause.next(from: .upcoming) == nil)
        #expect(LifecycleAction.publishUpdates.next(from: .preLaunch) == nil)
        // Test mode: from the draft to testing, and out by launching or by ending the test.
        #expect(LifecycleAction.publishForTesting.next(from: .preLaunch) == .testing)
        #expect(LifecycleAction.publishForTesting.next(from: .upcoming) == nil)
        #expect(LifecycleAction.publishUpdates.next(from: .testing) == .testing)
        #expect(LifecycleAction.launch.next(from: .testing) == .active)
        #expect(LifecycleAction.endTesting.next(from: .testing) == .preLaunch)
        #expect(LifecycleAction.endTesting.next(from: .active) == nil)
        #expect(LifecycleAction.launch.endsTesting(from: .testing) && LifecycleAction.endTesting.endsTesting(from: .testing))
        #expect(!LifecycleAction.publishUpdates.endsTesting(from: .testing) && !LifecycleAction.launch.endsTesting(from: .upcoming))
        #expect(StudyStatus.testing.wireName == "Active")
    }

    @Test func countersMoveOnlyForWhatChanged() throws {
        let first = try Self.example()
        let (v1, all) = VersionCounters.next(for: first, after: nil)
        #expect(v1.study == 1 && v1.consent == 1 && v1.activities.values.allSatisfy { $0 == 1 })
        #expect(all == StudyChanges(consent: true, activities: true, resources: true, info: true))

        let (same, none) = VersionCounters.next(for: first, after: (v1, first))
        #expect(same == v1)
        #expect(!none.any)

        var second = first
        second.activities[1].title = "Weekly survey (revised)"
        let (v2, activityOnly) = VersionCounters.next(for: second, after: (v1, first))
        #expect(v2.study == 2 && v2.consent == 1)
        #expect(v2.activities["weekly"] == 2 && v2.activities["daily"] == 1)
        #expect(activityOnly == StudyChanges(consent: false, activities: true, resources: false, info: false))

        var third = second
        third.consent.review.reasonForConsent = "I agree."
        third.tagline = "New tagline"
        third.activities.removeLast()
        let (v3, changes) = VersionCounters.next(for: third, after: (v2, second))
        #expect(v3.study == 3 && v3.consent == 2 && v3.activities["kicks"] == nil)
        #expect(changes == StudyChanges(consent: true, activities: true, resources: false, info: true))
        #expect(VersionCounters.label(1) == "1.0")
        #expect(VersionCounters.label(11) == "1.10")
    }

    @Test func nothingIsPublishedThatIsAlreadyOver() throws {
        let document = try Self.example()
        let beforeStart = ISO8601DateFormatter().date(from: "2026-12-01T12:00:00Z")!
        #expect(PublishGuard.problems(document, now: beforeStart) == [])
        let afterDaily = ISO8601DateFormatter().date(from: "2027-04-01T12:00:00Z")!
        let pointers = PublishGuard.problems(document, now: afterDaily).map(\.pointer)
        #expect(pointers.contains("/activities/0/schedule"))
        #expect(pointers.contains("/activities/5/schedule"))
        #expect(!pointers.contains("/activities/1/schedule"))
    }
}
