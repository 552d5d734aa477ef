import Foundation
import Logging
import ServiceKit
import StudyMetadataCore
import StudyModels
import Synchronization

/// Studies, their frozen versions, notifications and the calls queued for the other services, in
/// memory, for `StudyLifecycleActions`: one state changed in units of work
/// (`InMemoryTransactions`), so a refused action leaves nothing, as in PostgreSQL.
package final class InMemoryStudyLifecycle: Transactions, CatalogInvalidation {
    package struct Study: Sendable {
        package var status: StudyStatus
        package var draft: StudyDocument
        package var launchedAt: Date?
    }

    package struct Version: Sendable {
        package var counters: VersionCounters
        package var document: StudyDocument
        package var record: StudyVersionRecord
    }

    package struct QueuedMessage: Sendable, Equatable {
        package var studyId: String
        package var appId: String
        package var type: NotificationMessage.Kind
        package var subtype: String
        package var action: String
    }

    package struct State: Sendable {
        package var studies: [String: Study] = [:]
        /// Oldest first.
        package var versions: [String: [Version]] = [:]
        /// By app id: its organisation and kind.
        package var apps: [String: (orgId: String, kind: AppDefinition.Kind)] = [:]
        package var events: [InMemoryAudit.Event] = []
        /// The study's scheduled notifications as last synchronised (nil: none due).
        package var planned: [String: [StudyNotificationPlan.Due]?] = [:]
        package var testRunsForgotten: [String] = []
        package var lifecycleMessages: [QueuedMessage] = []
        package var testingEnded: [StudyTestingEnded] = []
        package var studyEvents: [StudyEvent] = []
        package var catalogChanges = 0
    }

    private let store: InMemoryTransactions<State>
    private let invalidations = Mutex(0)
    private let now: @Sendable () -> Date

    package init(now: @escaping @Sendable () -> Date = Date.init) {
        store = InMemoryTransactions(State())
        self.now = now
    }

    package var state: State { store.committed }
    /// How often the catalog caches were emptied.
    package var invalidated: Int { invalidations.withLock { $0 } }

    /// A study in `status` with `draft`, in an app of `kind`.
    package func add(_ draft: StudyDocument, status: StudyStatus = .preLaunch, appKind: AppDefinition.Kind = .standalone)
        async throws
    {
        try await store.update { state in
            state.studies[draft.studyId] = Study(status: status, draft: draft)
            state.apps[draft.appId] = ("ORG", appKind)
        }
    }

    /// Replaces a study's draft, as an editor's save would.
    package func edit(_ studyId: String, _ change: @Sendable (inout StudyDocument) -> Void) async throws {
        try await store.update { state in
            guard var study = state.studies[studyId] else { return }
            change(&study.draft)
            state.studies[studyId] = study
        }
    }

    package func invalidateAll() { invalidations.withLock { $0 += 1 } }

    package func run<Result: Sendable>(_ work: (any StudyLifecycleWork) async throws -> Result) async throws -> Result {
        try await store.run { copy in try await work(Unit(copy: copy, now: now())) }
    }

    private struct Unit: StudyLifecycleWork {
        let copy: WorkingCopy<State>
        let now: Date

        func lockDraft(studyId: String) async throws -> (status: StudyStatus, draft: StudyDocument)? {
            copy.value.studies[studyId].map { ($0.status, $0.draft) }
        }

        func latest(studyId: String) async throws -> (counters: VersionCounters, document: StudyDocument)? {
            copy.value.versions[studyId]?.last.map { ($0.counters, $0.document) }
        }

        func activityLabels(studyId: String) async throws -> [PublishedActivityLabel] {
            var labels: [PublishedActivityLabel] = []
            for version in (copy.value.versions[studyId] ?? []).reversed() {
                for (activityId, number) in version.counters.activities {
                    let label = version.document.activities.first { $0.activityId == activityId }?.versionLabel
                    labels.append(.init(
                        studyVersion: version.counters.study, activityId: activityId, activityVersion: number,
                        label: label ?? VersionCounters.label(number)))
                }
            }
            return labels
        }

        func versionLabels(studyId: String) async throws -> [PublishedVersionLabels] {
            (copy.value.versions[studyId] ?? []).map { PublishedVersionLabels($0.document, counters: $0.counters) }
        }

        func insertVersion(
            studyId: String, document: StudyDocument, counters: VersionCounters, changes: StudyChanges, by actor: String
        ) async throws -> StudyVersionRecord {
            let record = StudyVersionRecord(
                version: counters.study, label: VersionCounters.studyLabel(of: document, version: counters.study),
                consentVersion: counters.consent,
                activityVersions: counters.activities, changes: changes, publishedAt: now, publishedBy: actor)
            copy.value.versions[studyId, default: []].append(Version(counters: counters, document: document, record: record))
            return record
        }

        func setStatus(_ status: StudyStatus, launching: Bool, studyId: String) async throws {
            copy.value.studies[studyId]?.status = status
            if launching { copy.value.studies[studyId]?.launchedAt = now }
        }

        func app(ofStudy studyId: String) async throws -> (id: String, orgId: String, kind: String)? {
            guard let appId = copy.value.studies[studyId]?.draft.appId, let app = copy.value.apps[appId] else { return nil }
            return (appId, app.orgId, app.kind.rawValue)
        }

        func record(actor: String, action: String, studyId: String, studyVersion: Int?, details: [String: String]) async throws {
            copy.value.events.append(InMemoryAudit.Event(actor: actor, action: action, studyId: studyId, details: details))
        }

        func forgetTestRun(studyId: String) async throws { copy.value.testRunsForgotten.append(studyId) }

        func syncStudyNotifications(studyId: String, appId: String, planned: [StudyNotificationPlan.Due]?, by actor: String)
            async throws
        {
            copy.value.planned[studyId] = .some(planned)
        }

        func queueLifecycleMessage(
            studyId: String, appId: String, type: NotificationMessage.Kind, subtype: String, action: String,
            title: LocalizedText, message: LocalizedText, by actor: String
        ) async throws {
            copy.value.lifecycleMessages.append(
                QueuedMessage(studyId: studyId, appId: appId, type: type, subtype: subtype, action: action))
        }

        func tellTestingEnded(_ ended: StudyTestingEnded) async throws { copy.value.testingEnded.append(ended) }

        func tellStudyEvent(_ event: StudyEvent) async throws { copy.value.studyEvents.append(event) }

        func catalogChanged() async throws { copy.value.catalogChanges += 1 }
    }
}

/// The response service's storage check, answered from a list: problems per study, or no
/// answer at all (`StorageRehearsalUnavailable`). Counts the questions.
package final class InMemoryStorageRehearsals: StorageRehearsals {
    private struct State {
        var problems: [String: [StorageProblem]] = [:]
        var unreachable = false
        var asked: [(studyId: String, activities: [String])] = []
    }

    private let state = Mutex(State())

    package init() {}

    package func find(_ problems: [StorageProblem], in studyId: String) { state.withLock { $0.problems[studyId] = problems } }
    package func stopAnswering() { state.withLock { $0.unreachable = true } }
    /// The activities each question named, in order.
    package var asked: [[String]] { state.withLock { $0.asked.map(\.activities) } }

    package func problems(studyId: String, designs: [ActivityReply], logger: Logger) async throws -> [StorageProblem] {
        try state.withLock { state in
            if state.unreachable { throw StorageRehearsalUnavailable(description: "the response service did not answer") }
            state.asked.append((studyId, designs.compactMap(\.activity.metadata.activityId)))
            return state.problems[studyId] ?? []
        }
    }
}
