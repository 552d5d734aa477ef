import Foundation
import Logging
import ServiceKit
import StudyModels

/// Applies lifecycle actions (publish, launch, pause, ...) to a study: the use case that owns
/// the unit of work; the stores it calls only run SQL in its transaction.
package struct StudyLifecycleActions: Sendable {
    package let transactions: any Transactions<any StudyLifecycleWork>
    /// Emptied once an action has committed.
    package let catalog: any CatalogInvalidation
    /// Asked before a version is frozen whether a response to each activity can be stored.
    package let storage: any StorageRehearsals
    package let logger: Logger

    package init(
        transactions: any Transactions<any StudyLifecycleWork>, catalog: any CatalogInvalidation, storage: any StorageRehearsals,
        logger: Logger
    ) {
        self.transactions = transactions
        self.catalog = catalog
        self.storage = storage
        self.logger = logger
    }

    /// Applies `action` to the study in one transaction: status change, a new version when the
    /// action freezes a changed draft, the audit event, the study's notifications, and the
    /// `StudyEvent` for the response service (sent through the outbox once this commits).
    /// `mayAnnounceToApp`: whether the actor may address every user of the app (a super-admin).
    /// A study admin's publish or launch in a gateway app announces nothing app-wide: the study's
    /// name is text they chose, and an app's users are not theirs to message.
    /// `movingIn`: the draft is a study moved from another deployment, whose activities may have
    /// ended there already and are kept for their responses (`PublishGuard.pastSchedules` is not
    /// asked). `reconsent`: the team's choice when `publish-updates` freezes a consent change
    /// (`StudyChanges.reconsent`), needed then and refused otherwise; a moved-in version asks
    /// nobody to sign again unless told. Refusals are `StudyMetadataError`s.
    package func apply(
        _ action: LifecycleAction, studyId: String, by actor: String, mayAnnounceToApp: Bool, movingIn: Bool = false,
        reconsent: Bool? = nil, now: Date = Date()
    ) async throws -> (status: StudyStatus, frozen: StudyVersionRecord?) {
        let problems = { (draft: StudyDocument) in
            movingIn ? StudyValidator.validate(draft) : PublishGuard.problems(draft, now: now)
        }
        let checked = action.freezesDraft ? try await checkStorage(studyId: studyId, problems: problems) : nil
        let outcome = try await transactions.run { work -> (status: StudyStatus, frozen: StudyVersionRecord?) in
            guard let (status, draft) = try await work.lockDraft(studyId: studyId) else {
                throw StudyMetadataError.noStudy(studyId)
            }
            guard let next = action.next(from: status) else { throw StudyMetadataError.actionNotAllowed(action: action, current: status) }

            var frozen: StudyVersionRecord?
            if action.freezesDraft {
                let found = problems(draft)
                guard found.isEmpty else { throw StudyMetadataError.invalid(found, subject: .draft) }
                let previous = try await work.latest(studyId: studyId)
                var (counters, changes) = VersionCounters.next(for: draft, after: previous)
                changes.reconsent = try Self.reconsent(
                    reconsent, action: action, consentChanged: previous != nil && changes.consent, movingIn: movingIn)
                let history = try await work.activityLabels(studyId: studyId)
                let reused = VersionCounters.reusedLabels(in: draft, counters: counters, history: history)
                guard reused.isEmpty else { throw StudyMetadataError.invalid(reused, subject: .draft) }
                if previous == nil || changes.any {
                    // What is frozen is what was checked: the same draft, the same versions.
                    guard let checked, checked.draft == draft, checked.counters == counters else {
                        throw StudyMetadataError.changedWhileChecked(studyId: studyId)
                    }
                    if let refusal = checked.refusal { throw refusal }
                    let labelled = VersionCounters.frozen(
                        draft, counters: counters, history: try await work.versionLabels(studyId: studyId))
                    frozen = try await work.insertVersion(
                        studyId: studyId, document: labelled, counters: counters, changes: changes, by: actor)
                } else if action == .publishUpdates {
                    throw StudyMetadataError.nothingToPublish
                }
            } else if reconsent != nil {
                throw StudyMetadataError.reconsentWithoutConsentChange
            }
            let endsTesting = action.endsTesting(from: status)
            if endsTesting { try await forgetTesting(studyId: studyId, now: now, in: work) }
            try await work.setStatus(next, launching: action == .launch, studyId: studyId)
            var details = ["from": status.rawValue, "to": next.rawValue]
            if let frozen { details["label"] = frozen.label }
            if frozen?.changes.reconsent == true { details["reconsent"] = "true" }
            if endsTesting { details["testDataRemoved"] = "true" }
            if movingIn { details["movedIn"] = "true" }
            try await work.record(
                actor: actor, action: "study.\(action.rawValue)", studyId: studyId, studyVersion: frozen?.version, details: details)
            try await announce(
                action, studyId: studyId, status: next, by: actor, toApp: mayAnnounceToApp, now: now, in: work)
            try await work.catalogChanged()
            return (next, frozen)
        }
        catalog.invalidateAll()
        return outcome
    }

    /// A draft as the storage check saw it, and what the check found.
    private struct StorageChecked: Sendable {
        var draft: StudyDocument
        var counters: VersionCounters
        /// Why the draft may not be frozen; nil when a response to every activity was stored
        /// (or nothing would be frozen).
        var refusal: StudyMetadataError?
    }

    /// The re-consent of a version: the team's `choice` where `publish-updates` freezes a consent
    /// change (participants have signed an earlier one), false where no one can have signed. A
    /// moved-in version without a choice asks nobody: its participants signed what they signed
    /// at the deployment it comes from.
    static func reconsent(_ choice: Bool?, action: LifecycleAction, consentChanged: Bool, movingIn: Bool) throws -> Bool {
        guard action == .publishUpdates, consentChanged else {
            if choice != nil { throw StudyMetadataError.reconsentWithoutConsentChange }
            return false
        }
        guard let choice else {
            if movingIn { return false }
            throw StudyMetadataError.reconsentChoiceNeeded
        }
        return choice
    }

    /// A study whose answers cannot be stored never goes out: before a version is frozen, the
    /// response service stores a response to every activity and rolls it back (`StorageCheck`).
    /// It is asked before the transaction, which holds the study's row lock and never waits on
    /// another service; the transaction freezes the draft only if it is still the one checked.
    /// Nil when there is no study, or the draft has problems of its own (the transaction
    /// refuses both).
    private func checkStorage(
        studyId: String, problems: (StudyDocument) -> [ValidationProblem]
    ) async throws -> StorageChecked? {
        // A unit of its own, which ends before the response service is asked.
        let read = try await transactions.run { work -> (StudyDocument, VersionCounters, VersionCounters?, Bool)? in
            guard let (_, draft) = try await work.lockDraft(studyId: studyId) else { return nil }
            let previous = try await work.latest(studyId: studyId)
            let (counters, changes) = VersionCounters.next(for: draft, after: previous)
            return (draft, counters, previous?.counters, previous == nil || changes.any)
        }
        guard let (draft, counters, previous, freezes) = read, problems(draft).isEmpty else { return nil }
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
        let read = try await transactions.run { work -> (StudyDocument, VersionCounters, VersionCounters?)? in
            guard let (_, draft) = try await work.lockDraft(studyId: studyId) else { return nil }
            let previous = try await work.latest(studyId: studyId)
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
    private func forgetTesting(studyId: String, now: Date, in work: any StudyLifecycleWork) async throws {
        try await work.forgetTestRun(studyId: studyId)
        try await work.tellTestingEnded(StudyTestingEnded(studyId: studyId, endedAt: now))
    }

    /// What other services and participants hear of a lifecycle action.
    private func announce(
        _ action: LifecycleAction, studyId: String, status: StudyStatus, by actor: String, toApp: Bool, now: Date,
        in work: any StudyLifecycleWork
    ) async throws {
        guard let app = try await work.app(ofStudy: studyId) else { return }
        let latest = try await work.latest(studyId: studyId)

        if let document = latest?.document {
            try await work.syncStudyNotifications(
                studyId: studyId, appId: document.appId, planned: StudyNotificationPlan.due(document, status: status, now: now), by: actor)
            if let message = LifecycleMessage.message(
                for: action, studyName: document.name, gatewayApp: toApp && app.kind == AppDefinition.Kind.gateway.rawValue)
            {
                try await work.queueLifecycleMessage(
                    studyId: studyId, appId: app.id, type: message.type, subtype: message.subtype, action: action.rawValue,
                    title: document.name, message: message.message, by: actor)
            }
        }
        let event = StudyEvent.make(
            studyId: studyId, appId: app.id, orgId: app.orgId, status: status, latest: latest, action: action.rawValue,
            at: now)
        try await work.tellStudyEvent(event)
    }
}
