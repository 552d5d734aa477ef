import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Applies lifecycle actions (publish, launch, pause, ...) to a study: the use case that owns
/// the transaction; the stores it calls only run SQL on its connection.
package struct StudyLifecycleActions: Sendable {
    /// What the transaction found; a refusal is thrown once it has rolled back (an error thrown
    /// inside reaches the caller wrapped in the driver's transaction error).
    private enum Outcome: Sendable {
        case done(status: StudyStatus, frozen: StudyVersionRecord?)
        case refused(StudyMetadataError)
    }

    package let client: PostgresClient
    package let versions: StudyVersionStore
    package let audit: AuditLog
    package let outbox: Outbox
    package let notifications: NotificationStore
    package let catalog: CatalogCache
    /// Asked before a version is frozen whether a response to each activity can be stored.
    package let storage: any StorageRehearsals
    package let logger: Logger

    package init(
        client: PostgresClient, versions: StudyVersionStore, audit: AuditLog, outbox: Outbox,
        notifications: NotificationStore, catalog: CatalogCache, storage: any StorageRehearsals, logger: Logger
    ) {
        self.storage = storage
        self.client = client
        self.versions = versions
        self.audit = audit
        self.outbox = outbox
        self.notifications = notifications
        self.catalog = catalog
        self.logger = logger
    }

    /// Applies `action` to the study in one transaction: status change, a new version when the
    /// action freezes a changed draft, the audit event, the study's notifications, and the
    /// `StudyEvent` for the response service (sent through the outbox once this commits).
    /// `mayAnnounceToApp`: whether the actor may address every user of the app (a super-admin).
    /// A study admin's publish or launch in a gateway app announces nothing app-wide: the study's
    /// name is text they chose, and an app's users are not theirs to message.
    /// Refusals are `StudyMetadataError`s.
    package func apply(
        _ action: LifecycleAction, studyId: String, by actor: String, mayAnnounceToApp: Bool, now: Date = Date()
    ) async throws -> (status: StudyStatus, frozen: StudyVersionRecord?) {
        let checked = action.freezesDraft ? try await checkStorage(studyId: studyId, now: now) : nil
        let outcome = try await client.withTransaction(logger: logger) { connection -> Outcome in
            guard let (status, draft) = try await versions.lockDraft(studyId: studyId, on: connection) else {
                return .refused(.noStudy(studyId))
            }
            guard let next = action.next(from: status) else { return .refused(.actionNotAllowed(action: action, current: status)) }

            var frozen: StudyVersionRecord?
            if action.freezesDraft {
                let problems = PublishGuard.problems(draft, now: now)
                guard problems.isEmpty else { return .refused(.invalid(problems, subject: .draft)) }
                let previous = try await versions.latest(studyId: studyId, on: connection)
                let (counters, changes) = VersionCounters.next(for: draft, after: previous)
                let history = try await StudyVersionStore.activityLabels(studyId: studyId, on: connection, logger: logger)
                let reused = VersionCounters.reusedLabels(in: draft, counters: counters, history: history)
                guard reused.isEmpty else { return .refused(.invalid(reused, subject: .draft)) }
                if previous == nil || changes.any {
                    // What is frozen is what was checked: the same draft, the same versions.
                    guard let checked, checked.draft == draft, checked.counters == counters else {
                        return .refused(.changedWhileChecked(studyId: studyId))
                    }
                    if let refusal = checked.refusal { return .refused(refusal) }
                    frozen = try await versions.insertVersion(
                        studyId: studyId, document: draft, counters: counters, changes: changes, by: actor, on: connection)
                } else if action == .publishUpdates {
                    return .refused(.nothingToPublish)
                }
            }
            let endsTesting = action.endsTesting(from: status)
            if endsTesting { try await forgetTesting(studyId: studyId, now: now, on: connection) }
            try await versions.setStatus(next, launching: action == .launch, studyId: studyId, on: connection)
            var details = ["from": status.rawValue, "to": next.rawValue]
            if let frozen { details["label"] = frozen.label }
            if endsTesting { details["testDataRemoved"] = "true" }
            try await audit.record(
                actor: actor, action: "study.\(action.rawValue)", studyId: studyId, studyVersion: frozen?.version,
                details: details, on: connection)
            try await announce(
                action, studyId: studyId, status: next, by: actor, toApp: mayAnnounceToApp, now: now, on: connection)
            try await CatalogCache.notifyChange(on: connection, logger: logger)
            return Outcome.done(status: next, frozen: frozen)
        }
        switch outcome {
        case .refused(let error): throw error
        case .done(let status, let frozen):
            catalog.invalidateAll()
            return (status, frozen)
        }
    }

    /// A draft as the storage check saw it, and what the check found.
    private struct StorageChecked: Sendable {
        var draft: StudyDocument
        var counters: VersionCounters
        /// Why the draft may not be frozen; nil when a response to every activity was stored
        /// (or nothing would be frozen).
        var refusal: StudyMetadataError?
    }

    /// A study whose answers cannot be stored never goes out: before a version is frozen, the
    /// response service stores a response to every activity and rolls it back (`StorageCheck`).
    /// It is asked before the transaction, which holds the study's row lock and never waits on
    /// another service; the transaction freezes the draft only if it is still the one checked.
    /// Nil when there is no study, or the draft has problems of its own (the transaction
    /// refuses both).
    private func checkStorage(studyId: String, now: Date) async throws -> StorageChecked? {
        let read = try await client.withConnection { connection -> (StudyDocument, VersionCounters, VersionCounters?, Bool)? in
            // Outside a transaction, the row lock of `lockDraft` ends with its statement: a plain read.
            guard let (_, draft) = try await versions.lockDraft(studyId: studyId, on: connection) else { return nil }
            let previous = try await versions.latest(studyId: studyId, on: connection)
            let (counters, changes) = VersionCounters.next(for: draft, after: previous)
            return (draft, counters, previous?.counters, previous == nil || changes.any)
        }
        guard let (draft, counters, previous, freezes) = read, PublishGuard.problems(draft, now: now).isEmpty else { return nil }
        guard freezes else { return StorageChecked(draft: draft, counters: counters, refusal: nil) }
        do {
            let found = try await storage.problems(
                studyId: studyId, designs: StorageCheck.designs(of: draft, counters: counters, previous: previous), logger: logger)
            let refusal = found.isEmpty ? nil : StudyMetadataError.invalid(StorageCheck.validationProblems(found, in: draft), subject: .draft)
            return StorageChecked(draft: draft, counters: counters, refusal: refusal)
        } catch let unavailable as StorageRehearsalUnavailable {
            return StorageChecked(draft: draft, counters: counters, refusal: .storageUnchecked(unavailable.description))
        }
    }

    /// What the storage check finds in the study's draft now, for the console's check-list (the
    /// activities publishing it would give a new version): each problem at its step, in the words
    /// a refused publish uses. Throws `storageUnchecked` when
    /// the response service cannot be asked, `noStudy` for no study.
    package func storageProblems(studyId: String) async throws -> [ValidationProblem] {
        let read = try await client.withConnection { connection -> (StudyDocument, VersionCounters, VersionCounters?)? in
            guard let (_, draft) = try await versions.lockDraft(studyId: studyId, on: connection) else { return nil }
            let previous = try await versions.latest(studyId: studyId, on: connection)
            return (draft, VersionCounters.next(for: draft, after: previous).0, previous?.counters)
        }
        guard let (draft, counters, previous) = read else { throw StudyMetadataError.noStudy(studyId) }
        do {
            let found = try await storage.problems(
                studyId: studyId, designs: StorageCheck.designs(of: draft, counters: counters, previous: previous), logger: logger)
            return StorageCheck.validationProblems(found, in: draft)
        } catch let unavailable as StorageRehearsalUnavailable {
            throw StudyMetadataError.storageUnchecked(unavailable.description)
        }
    }

    /// A test run ends: the notifications testers were sent go (so that launch schedules them
    /// again for everyone), and the registration service is told to forget what it recorded for
    /// the study until now. The response service removes its testers' data when the study's
    /// event says it left testing.
    private func forgetTesting(studyId: String, now: Date, on connection: PostgresConnection) async throws {
        try await notifications.forgetTestRun(studyId: studyId, on: connection)
        try await outbox.enqueue(
            InternalCalls.testingEnded, ["studyId": studyId],
            payload: StudyTestingEnded(studyId: studyId, endedAt: now), on: connection)
    }

    /// What other services and participants hear of a lifecycle action.
    private func announce(
        _ action: LifecycleAction, studyId: String, status: StudyStatus, by actor: String, toApp: Bool, now: Date,
        on connection: PostgresConnection
    ) async throws {
        guard let app = try await versions.app(ofStudy: studyId, on: connection) else { return }
        let latest = try await versions.latest(studyId: studyId, on: connection)

        if let document = latest?.document {
            try await notifications.syncStudyNotifications(
                studyId: studyId, appId: document.appId, planned: StudyNotificationPlan.due(document, status: status, now: now), by: actor,
                on: connection)
            if let message = LifecycleMessage.message(
                for: action, studyName: document.name, gatewayApp: toApp && app.kind == AppDefinition.Kind.gateway.rawValue)
            {
                try await notifications.queueLifecycleMessage(
                    studyId: studyId, appId: app.id, type: message.type, subtype: message.subtype, action: action.rawValue,
                    title: document.name, message: message.message, by: actor, on: connection)
            }
        }
        let event = StudyEvent.make(
            studyId: studyId, appId: app.id, orgId: app.orgId, status: status, latest: latest, action: action.rawValue,
            at: now)
        try await outbox.enqueue(InternalCalls.studyEvents, payload: event, on: connection)
    }
}
