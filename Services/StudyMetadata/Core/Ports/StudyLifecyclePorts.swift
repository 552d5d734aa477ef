import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

// What `StudyLifecycleActions` needs of storage: one unit of work (`Transactions<any
// StudyLifecycleWork>`) in which it reads and locks the study, freezes a version, sets the status,
// records the audit event, queues notifications and the calls to the other services; and the
// catalog caches to empty once that has committed. `PostgresStudyLifecycleWork` binds the stores
// to one transaction; the tests' in-memory conformer stands in for it.

/// The study-metadata stores as the lifecycle changes them, inside one transaction.
package protocol StudyLifecycleWork {
    /// The study's status and draft, locked for the rest of the transaction; nil for no study.
    func lockDraft(studyId: String) async throws -> (status: StudyStatus, draft: StudyDocument)?
    /// The newest version's counters and document.
    func latest(studyId: String) async throws -> (counters: VersionCounters, document: StudyDocument)?
    /// Every published activity version with its label, newest study version first.
    func activityLabels(studyId: String) async throws -> [PublishedActivityLabel]
    /// Every version's study and consent labels, oldest first.
    func versionLabels(studyId: String) async throws -> [PublishedVersionLabels]
    func insertVersion(studyId: String, document: StudyDocument, counters: VersionCounters, changes: StudyChanges, by actor: String)
        async throws -> StudyVersionRecord
    /// `launching` also records the launch time.
    func setStatus(_ status: StudyStatus, launching: Bool, studyId: String) async throws
    /// The app the study belongs to, with its kind.
    func app(ofStudy studyId: String) async throws -> (id: String, orgId: String, kind: String)?
    func record(actor: String, action: String, studyId: String, studyVersion: Int?, details: [String: String]) async throws
    /// The study's own notifications and messages go (what testers were sent).
    func forgetTestRun(studyId: String) async throws
    /// The study's scheduled notifications made to match `planned` (nil: none are due any more).
    func syncStudyNotifications(studyId: String, appId: String, planned: [StudyNotificationPlan.Due]?, by actor: String)
        async throws
    func queueLifecycleMessage(
        studyId: String, appId: String, type: NotificationMessage.Kind, subtype: String, action: String, title: LocalizedText,
        message: LocalizedText, by actor: String
    ) async throws
    /// Tells the registration service, once this commits, to forget the study's test run.
    func tellTestingEnded(_ ended: StudyTestingEnded) async throws
    /// Tells the response service, once this commits, what became of the study.
    func tellStudyEvent(_ event: StudyEvent) async throws
    /// Tells every replica's catalog cache, once this commits, that published studies changed.
    func catalogChanged() async throws
}

/// The catalog caches of this process, emptied once a change has committed.
package protocol CatalogInvalidation: Sendable {
    func invalidateAll()
}

extension CatalogCache: CatalogInvalidation {}

/// The stores bound to one transaction's connection.
package struct PostgresStudyLifecycleWork: StudyLifecycleWork {
    package let connection: PostgresConnection
    package let versions: StudyVersionStore
    package let audit: AuditLog
    package let outbox: Outbox
    package let notifications: NotificationStore
    package let logger: Logger

    /// Units of work over these stores.
    package static func transactions(
        client: PostgresClient, versions: StudyVersionStore, audit: AuditLog, outbox: Outbox, notifications: NotificationStore,
        logger: Logger
    ) -> PostgresTransactions<any StudyLifecycleWork> {
        PostgresTransactions(client: client, logger: logger) { connection in
            PostgresStudyLifecycleWork(
                connection: connection, versions: versions, audit: audit, outbox: outbox, notifications: notifications,
                logger: logger)
        }
    }

    package func lockDraft(studyId: String) async throws -> (status: StudyStatus, draft: StudyDocument)? {
        try await versions.lockDraft(studyId: studyId, on: connection)
    }

    package func latest(studyId: String) async throws -> (counters: VersionCounters, document: StudyDocument)? {
        try await versions.latest(studyId: studyId, on: connection)
    }

    package func activityLabels(studyId: String) async throws -> [PublishedActivityLabel] {
        try await StudyVersionStore.activityLabels(studyId: studyId, on: connection, logger: logger)
    }

    package func versionLabels(studyId: String) async throws -> [PublishedVersionLabels] {
        try await StudyVersionStore.versionLabels(studyId: studyId, on: connection, logger: logger)
    }

    package func insertVersion(
        studyId: String, document: StudyDocument, counters: VersionCounters, changes: StudyChanges, by actor: String
    ) async throws -> StudyVersionRecord {
        try await versions.insertVersion(
            studyId: studyId, document: document, counters: counters, changes: changes, by: actor, on: connection)
    }

    package func setStatus(_ status: StudyStatus, launching: Bool, studyId: String) async throws {
        try await versions.setStatus(status, launching: launching, studyId: studyId, on: connection)
    }

    package func app(ofStudy studyId: String) async throws -> (id: String, orgId: String, kind: String)? {
        try await versions.app(ofStudy: studyId, on: connection)
    }

    package func record(actor: String, action: String, studyId: String, studyVersion: Int?, details: [String: String]) async throws {
        try await audit.record(
            actor: actor, action: action, studyId: studyId, studyVersion: studyVersion, details: details, on: connection)
    }

    package func forgetTestRun(studyId: String) async throws {
        try await notifications.forgetTestRun(studyId: studyId, on: connection)
    }

    package func syncStudyNotifications(studyId: String, appId: String, planned: [StudyNotificationPlan.Due]?, by actor: String)
        async throws
    {
        try await notifications.syncStudyNotifications(studyId: studyId, appId: appId, planned: planned, by: actor, on: connection)
    }

    package func queueLifecycleMessage(
        studyId: String, appId: String, type: NotificationMessage.Kind, subtype: String, action: String, title: LocalizedText,
        message: LocalizedText, by actor: String
    ) async throws {
        try await notifications.queueLifecycleMessage(
            studyId: studyId, appId: appId, type: type, subtype: subtype, action: action, title: title, message: message,
            by: actor, on: connection)
    }

    package func tellTestingEnded(_ ended: StudyTestingEnded) async throws {
        try await outbox.enqueue(InternalCalls.testingEnded, ["studyId": ended.studyId], payload: ended, on: connection)
    }

    package func tellStudyEvent(_ event: StudyEvent) async throws {
        try await outbox.enqueue(InternalCalls.studyEvents, payload: event, on: connection)
    }

    package func catalogChanged() async throws {
        try await CatalogCache.notifyChange(on: connection, logger: logger)
    }
}
