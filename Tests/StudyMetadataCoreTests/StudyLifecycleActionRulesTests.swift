import Foundation
import InMemoryPorts
import Logging
import StudyMetadataCore
import StudyModels
import Testing

/// `StudyLifecycleActions` against in-memory studies: what each action freezes, records, queues
/// and tells the other services, and that every refusal (the status, the draft's problems, the
/// storage check, nothing to publish) leaves the study as it was.
@Suite struct StudyLifecycleActionRulesTests {
    static let exampleURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")
    static let now = ISO8601DateFormatter().date(from: "2026-12-01T12:00:00Z")!

    struct Fixture {
        let store = InMemoryStudyLifecycle(now: { StudyLifecycleActionRulesTests.now })
        let rehearsals = InMemoryStorageRehearsals()
        var actions: StudyLifecycleActions {
            StudyLifecycleActions(transactions: store, catalog: store, storage: rehearsals, logger: Logger(label: "test"))
        }

        init(status: StudyStatus = .preLaunch, appKind: AppDefinition.Kind = .standalone) async throws {
            let draft = try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: StudyLifecycleActionRulesTests.exampleURL))
            try await store.add(draft, status: status, appKind: appKind)
        }

        @discardableResult
        func apply(_ action: LifecycleAction, mayAnnounceToApp: Bool = false, now: Date = StudyLifecycleActionRulesTests.now)
            async throws -> (status: StudyStatus, frozen: StudyVersionRecord?)
        {
            try await actions.apply(action, studyId: "SLEEPWELL", by: "admin-1", mayAnnounceToApp: mayAnnounceToApp, now: now)
        }

        func refusal(_ action: LifecycleAction, now: Date = StudyLifecycleActionRulesTests.now) async -> StudyMetadataError? {
            do {
                try await apply(action, now: now)
                return nil
            } catch {
                return error as? StudyMetadataError
            }
        }
    }

    @Test func publishingFreezesTheFirstVersionAndTellsTheResponseService() async throws {
        let fixture = try await Fixture()
        let (status, frozen) = try await fixture.apply(.publish)
        #expect(status == .upcoming)
        #expect(frozen?.version == 1 && frozen?.label == "1.0")
        let state = fixture.store.state
        #expect(state.studies["SLEEPWELL"]?.status == .upcoming)
        #expect(state.versions["SLEEPWELL"]?.count == 1)
        #expect(state.events.count == 1)
        #expect(state.events.first?.action == "study.publish")
        #expect(state.events.first?.details == ["from": "pre_launch", "to": "upcoming", "label": "1.0"])
        #expect(state.studyEvents.count == 1)
        #expect(state.studyEvents.first?.status == .upcoming && state.studyEvents.first?.version == 1)
        #expect(state.catalogChanges == 1)
        #expect(fixture.store.invalidated == 1, "the caches are emptied once it has committed")
        #expect(fixture.rehearsals.asked.count == 1)
        #expect(fixture.rehearsals.asked.first?.count == 9, "a response to every activity is rehearsed")
    }

    @Test func anActionTheStatusDoesNotAllowChangesNothing() async throws {
        let fixture = try await Fixture()
        #expect(await fixture.refusal(.pause) == .actionNotAllowed(action: .pause, current: .preLaunch))
        #expect(await fixture.refusal(.publishUpdates) == .actionNotAllowed(action: .publishUpdates, current: .preLaunch))
        let missing = await {
            do {
                _ = try await fixture.actions.apply(.publish, studyId: "NOSUCH", by: "admin-1", mayAnnounceToApp: false, now: Self.now)
                return StudyMetadataError?.none
            } catch { return error as? StudyMetadataError }
        }()
        #expect(missing == .noStudy("NOSUCH"))
        let state = fixture.store.state
        #expect(state.studies["SLEEPWELL"]?.status == .preLaunch)
        #expect(state.events.isEmpty && state.studyEvents.isEmpty && state.catalogChanges == 0)
        #expect(fixture.store.invalidated == 0)
    }

    @Test func aDraftWhoseSchedulesAreOverIsNotFrozen() async throws {
        let fixture = try await Fixture()
        let later = ISO8601DateFormatter().date(from: "2027-04-01T12:00:00Z")!
        guard case .invalid(let problems, subject: .draft) = await fixture.refusal(.publish, now: later) else {
            Issue.record("a draft with problems was not refused as invalid")
            return
        }
        #expect(problems.map(\.pointer).contains("/activities/0/schedule"))
        #expect(fixture.store.state.versions.isEmpty)
        #expect(fixture.store.state.studies["SLEEPWELL"]?.status == .preLaunch)
    }

    @Test func publishingUpdatesWithNothingChangedIsRefusedAndAChangeMakesVersionTwo() async throws {
        let fixture = try await Fixture()
        try await fixture.apply(.publish)
        try await fixture.apply(.launch)
        #expect(await fixture.refusal(.publishUpdates) == .nothingToPublish)
        #expect(fixture.store.state.versions["SLEEPWELL"]?.count == 1)
        try await fixture.store.edit("SLEEPWELL") { $0.activities[1].title = "Weekly survey (revised)" }
        let (status, frozen) = try await fixture.apply(.publishUpdates)
        #expect(status == .active)
        #expect(frozen?.version == 2 && frozen?.activityVersions["weekly"] == 2 && frozen?.activityVersions["daily"] == 1)
        #expect(fixture.rehearsals.asked.last == ["weekly"], "only the changed activity is rehearsed")
        #expect(fixture.store.state.studies["SLEEPWELL"]?.launchedAt == Self.now)
    }

    @Test func aVersionLabelUsedBeforeForOtherContentIsRefused() async throws {
        let fixture = try await Fixture()
        try await fixture.store.edit("SLEEPWELL") { $0.activities[1].versionLabel = "v1" }
        try await fixture.apply(.publish)
        try await fixture.apply(.launch)
        try await fixture.store.edit("SLEEPWELL") { $0.activities[1].title = "Weekly survey (revised)" }
        let refusal = await fixture.refusal(.publishUpdates)
        guard case .invalid(let problems, subject: .draft) = refusal else {
            Issue.record("a reused label was not refused: \(String(describing: refusal))")
            return
        }
        #expect(problems.map(\.pointer) == ["/activities/1/versionLabel"])
        #expect(fixture.store.state.versions["SLEEPWELL"]?.count == 1)
    }

    @Test func aStudyWhoseAnswersCannotBeStoredIsNotFrozen() async throws {
        let fixture = try await Fixture()
        fixture.rehearsals.find([StorageProblem(activityId: "daily", stepKey: nil, message: "too many columns")], in: "SLEEPWELL")
        guard case .invalid(let problems, subject: .draft) = await fixture.refusal(.publish) else {
            Issue.record("a storage problem did not refuse the publish")
            return
        }
        #expect(problems.count == 1)
        #expect(problems.first?.pointer.hasPrefix("/activities/0") == true)
        #expect(fixture.store.state.versions.isEmpty && fixture.store.state.events.isEmpty)

        let unchecked = try await Fixture()
        unchecked.rehearsals.stopAnswering()
        guard case .storageUnchecked = await unchecked.refusal(.publish) else {
            Issue.record("an unanswered storage check did not refuse the publish")
            return
        }
        #expect(unchecked.store.state.versions.isEmpty)
    }

    @Test func leavingTestingForgetsTheTestRunEverywhere() async throws {
        let fixture = try await Fixture()
        try await fixture.apply(.publishForTesting)
        #expect(fixture.store.state.studies["SLEEPWELL"]?.status == .testing)
        #expect(fixture.store.state.testingEnded.isEmpty)
        let (status, frozen) = try await fixture.apply(.launch)
        #expect(status == .active)
        #expect(frozen == nil, "nothing changed since the test version")
        let state = fixture.store.state
        #expect(state.testRunsForgotten == ["SLEEPWELL"])
        #expect(state.testingEnded == [StudyTestingEnded(studyId: "SLEEPWELL", endedAt: Self.now)])
        #expect(state.events.last?.details["testDataRemoved"] == "true")
    }

    /// A gateway app's users hear of a new study only from a super-admin's action; a pause is
    /// told to the study's participants whoever pauses it.
    @Test func anAppWideAnnouncementNeedsOneWhoMayAddressTheApp() async throws {
        let studyAdmin = try await Fixture(appKind: .gateway)
        try await studyAdmin.apply(.publish, mayAnnounceToApp: false)
        #expect(studyAdmin.store.state.lifecycleMessages.isEmpty)

        let superAdmin = try await Fixture(appKind: .gateway)
        try await superAdmin.apply(.publish, mayAnnounceToApp: true)
        #expect(superAdmin.store.state.lifecycleMessages.map(\.type) == [.gateway])
        try await superAdmin.apply(.launch, mayAnnounceToApp: true)
        try await superAdmin.apply(.pause)
        #expect(superAdmin.store.state.lifecycleMessages.map(\.subtype) == ["Study", "Study", "studyEvent"])
        #expect(superAdmin.store.state.studyEvents.map(\.status) == [.upcoming, .active, .paused])
    }
}
