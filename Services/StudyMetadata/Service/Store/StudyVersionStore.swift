import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Lifecycle actions and the immutable versions they freeze.
struct StudyVersionStore: Sendable {
    /// One frozen version, as the admin API lists it.
    struct VersionRecord: Codable, Sendable, Equatable {
        var version: Int
        /// How the apps see it ("1.0", "1.1", ...).
        var label: String
        var consentVersion: Int
        var activityVersions: [String: Int]
        var changes: StudyChanges
        var publishedAt: Date
        var publishedBy: String
    }

    enum Outcome: Sendable {
        case done(status: StudyStatus, frozen: VersionRecord?)
        case notFound
        case notAllowed(current: StudyStatus)
        case invalid([ValidationProblem])
        case nothingToPublish
    }

    let client: PostgresClient
    let audit: AuditLog
    let outbox: Outbox
    let notifications: NotificationStore
    let catalog: CatalogCache
    let logger: Logger

    /// Applies `action` to the study in one transaction: status change, a new version when the
    /// action freezes a changed draft, the audit event, the study's notifications, and the
    /// `StudyEvent` for the response service (sent through the outbox once this commits).
    /// `mayAnnounceToApp`: whether the actor may address every user of the app (a super-admin).
    /// A study admin's publish or launch in a gateway app announces nothing app-wide: the study's
    /// name is text they chose, and an app's users are not theirs to message.
    func apply(
        _ action: LifecycleAction, studyId: String, by actor: String, mayAnnounceToApp: Bool, now: Date = Date()
    ) async throws -> Outcome {
        let outcome = try await client.withTransaction(logger: logger) { connection -> Outcome in
            let rows = try await connection.query(
                "SELECT status, draft::text FROM studies WHERE study_id = \(studyId) FOR UPDATE", logger: logger)
            var found: (String, String)?
            for try await row in rows.decode((String, String).self) { found = row }
            guard let (statusText, draftText) = found, let status = StudyStatus(rawValue: statusText) else { return .notFound }
            guard let next = action.next(from: status) else { return .notAllowed(current: status) }

            var frozen: VersionRecord?
            if action.freezesDraft {
                let draft = try JSONDecoder().decode(StudyDocument.self, from: Data(draftText.utf8))
                let problems = PublishGuard.problems(draft, now: now)
                guard problems.isEmpty else { return .invalid(problems) }
                let previous = try await latest(studyId: studyId, on: connection)
                let (counters, changes) = VersionCounters.next(for: draft, after: previous)
                if previous == nil || changes.any {
                    frozen = try await insertVersion(
                        studyId: studyId, document: draft, counters: counters, changes: changes, by: actor, on: connection)
                } else if action == .publishUpdates {
                    return .nothingToPublish
                }
            }
            try await connection.query(
                """
                UPDATE studies SET status = \(next.rawValue),
                    launched_at = CASE WHEN \(action == .launch) THEN now() ELSE launched_at END
                WHERE study_id = \(studyId)
                """, logger: logger)
            var details = ["from": status.rawValue, "to": next.rawValue]
            if let frozen { details["label"] = frozen.label }
            try await audit.record(
                actor: actor, action: "study.\(action.rawValue)", studyId: studyId, studyVersion: frozen?.version,
                details: details, on: connection)
            try await announce(
                action, studyId: studyId, status: next, by: actor, toApp: mayAnnounceToApp, now: now, on: connection)
            try await CatalogCache.notifyChange(on: connection, logger: logger)
            return Outcome.done(status: next, frozen: frozen)
        }
        if case .done = outcome { catalog.invalidateAll() }
        return outcome
    }

    /// What other services and participants hear of a lifecycle action.
    private func announce(
        _ action: LifecycleAction, studyId: String, status: StudyStatus, by actor: String, toApp: Bool, now: Date,
        on connection: PostgresConnection
    ) async throws {
        let rows = try await connection.query(
            """
            SELECT a.app_id, a.org_id, a.definition ->> 'kind' FROM studies s JOIN apps a ON a.app_id = s.app_id
            WHERE s.study_id = \(studyId)
            """, logger: logger)
        var app: (id: String, orgId: String, kind: String)?
        for try await row in rows.decode((String, String, String).self) { app = row }
        guard let app else { return }
        let latest = try await latest(studyId: studyId, on: connection)

        if let document = latest?.document {
            try await notifications.syncStudyNotifications(
                document: document, status: status, by: actor, now: now, on: connection)
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
        try await outbox.enqueue(.POST, to: .response, path: InternalPaths.studyEvents, payload: event, on: connection)
    }

    /// The newest version's counters and document.
    private func latest(
        studyId: String, on connection: PostgresConnection
    ) async throws -> (counters: VersionCounters, document: StudyDocument)? {
        let rows = try await connection.query(
            """
            SELECT version, consent_version, activity_versions::text, document::text FROM study_versions
            WHERE study_id = \(studyId) ORDER BY version DESC LIMIT 1
            """, logger: logger)
        for try await (version, consent, activities, document) in rows.decode((Int, Int, String, String).self) {
            let counters = VersionCounters(
                study: version, consent: consent,
                activities: try JSONDecoder().decode([String: Int].self, from: Data(activities.utf8)))
            return (counters, try JSONDecoder().decode(StudyDocument.self, from: Data(document.utf8)))
        }
        return nil
    }

    private func insertVersion(
        studyId: String, document: StudyDocument, counters: VersionCounters, changes: StudyChanges, by actor: String,
        on connection: PostgresConnection
    ) async throws -> VersionRecord {
        let encoder = JSONEncoder()
        let rows = try await connection.query(
            """
            INSERT INTO study_versions (study_id, version, consent_version, activity_versions, changes, document, published_by)
            VALUES (\(studyId), \(counters.study), \(counters.consent),
                    \(String(decoding: try encoder.encode(counters.activities), as: UTF8.self))::jsonb,
                    \(String(decoding: try encoder.encode(changes), as: UTF8.self))::jsonb,
                    \(String(decoding: try encoder.encode(document), as: UTF8.self))::jsonb, \(actor))
            RETURNING published_at
            """, logger: logger)
        var publishedAt = Date()
        for try await at in rows.decode(Date.self) { publishedAt = at }
        return VersionRecord(
            version: counters.study, label: VersionCounters.label(counters.study), consentVersion: counters.consent,
            activityVersions: counters.activities, changes: changes, publishedAt: publishedAt, publishedBy: actor)
    }

    /// Every version of the study, oldest first.
    func versions(studyId: String) async throws -> [VersionRecord] {
        let rows = try await client.query(
            """
            SELECT version, consent_version, activity_versions::text, changes::text, published_at, published_by
            FROM study_versions WHERE study_id = \(studyId) ORDER BY version
            """, logger: logger)
        var records: [VersionRecord] = []
        let decoder = JSONDecoder()
        for try await (version, consent, activities, changes, at, by) in rows.decode(
            (Int, Int, String, String, Date, String).self)
        {
            records.append(VersionRecord(
                version: version, label: VersionCounters.label(version), consentVersion: consent,
                activityVersions: try decoder.decode([String: Int].self, from: Data(activities.utf8)),
                changes: try decoder.decode(StudyChanges.self, from: Data(changes.utf8)), publishedAt: at, publishedBy: by))
        }
        return records
    }

    /// A frozen version's document, as JSON text.
    func document(studyId: String, version: Int) async throws -> String? {
        let rows = try await client.query(
            "SELECT document::text FROM study_versions WHERE study_id = \(studyId) AND version = \(version)", logger: logger)
        for try await text in rows.decode(String.self) { return text }
        return nil
    }
}
