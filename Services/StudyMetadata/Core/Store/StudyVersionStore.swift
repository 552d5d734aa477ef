import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The immutable versions lifecycle actions freeze, and the study status they change.
package struct StudyVersionStore: Sendable {
    /// One frozen version, as the admin API lists it.
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The study's status and draft, locked for the rest of the transaction; nil when there is
    /// no such study.
    package func lockDraft(
        studyId: String, on connection: PostgresConnection
    ) async throws -> (status: StudyStatus, draft: StudyDocument)? {
        let rows = try await connection.query(
            "SELECT status, draft::text FROM studies WHERE study_id = \(studyId) FOR UPDATE", logger: logger)
        for try await (statusText, draftText) in rows.decode((String, String).self) {
            guard let status = StudyStatus(rawValue: statusText) else { return nil }
            return (status, try JSONDecoder().decode(StudyDocument.self, from: Data(draftText.utf8)))
        }
        return nil
    }

    /// Sets the study's status; `launching` also records the launch time.
    package func setStatus(
        _ status: StudyStatus, launching: Bool, studyId: String, on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            UPDATE studies SET status = \(status.rawValue),
                launched_at = CASE WHEN \(launching) THEN now() ELSE launched_at END
            WHERE study_id = \(studyId)
            """, logger: logger)
    }

    /// The app the study belongs to.
    package func app(
        ofStudy studyId: String, on connection: PostgresConnection
    ) async throws -> (id: String, orgId: String, kind: String)? {
        let rows = try await connection.query(
            """
            SELECT a.app_id, a.org_id, a.definition ->> 'kind' FROM studies s JOIN apps a ON a.app_id = s.app_id
            WHERE s.study_id = \(studyId)
            """, logger: logger)
        for try await row in rows.decode((String, String, String).self) { return row }
        return nil
    }


    /// Every published activity version of the study with its label (the admin's, else numbered),
    /// newest study version first; only `activityId`'s, in any case, when given.
    package static func activityLabels(
        studyId: String, activityId: String? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> [PublishedActivityLabel] {
        let rows = try await connection.query(
            """
            SELECT v.version, a.key, a.value::int,
                   (SELECT act->>'versionLabel' FROM jsonb_array_elements(v.document->'activities') act
                    WHERE act->>'activityId' = a.key LIMIT 1)
            FROM study_versions v, jsonb_each_text(v.activity_versions) a
            WHERE v.study_id = \(studyId) AND (\(activityId)::text IS NULL OR lower(a.key) = lower(\(activityId)))
            ORDER BY v.version DESC
            """, logger: logger)
        var labels: [PublishedActivityLabel] = []
        for try await (version, activity, number, label) in rows.decode((Int, String, Int, String?).self) {
            labels.append(.init(
                studyVersion: version, activityId: activity, activityVersion: number, label: label ?? VersionCounters.label(number)))
        }
        return labels
    }

    /// Every version's study and consent numbers with the labels its document gave them.
    package static func versionLabels(
        studyId: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> [PublishedVersionLabels] {
        let rows = try await connection.query(
            """
            SELECT version, document->>'versionLabel', consent_version, document->'consent'->>'versionLabel'
            FROM study_versions WHERE study_id = \(studyId) ORDER BY version
            """, logger: logger)
        var labels: [PublishedVersionLabels] = []
        for try await (version, label, consent, consentLabel) in rows.decode((Int, String?, Int, String?).self) {
            labels.append(.init(version: version, versionLabel: label, consentVersion: consent, consentLabel: consentLabel))
        }
        return labels
    }

    /// The newest version's counters and document.
    package func latest(
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

    package func insertVersion(
        studyId: String, document: StudyDocument, counters: VersionCounters, changes: StudyChanges, by actor: String,
        on connection: PostgresConnection
    ) async throws -> StudyVersionRecord {
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
        return StudyVersionRecord(
            version: counters.study, label: VersionCounters.studyLabel(of: document, version: counters.study),
            consentVersion: counters.consent, activityVersions: counters.activities, changes: changes,
            publishedAt: publishedAt, publishedBy: actor)
    }

    /// Every version of the study, oldest first.
    package func versions(studyId: String) async throws -> [StudyVersionRecord] {
        let rows = try await client.query(
            """
            SELECT version, consent_version, activity_versions::text, changes::text, published_at, published_by,
                   document->>'versionLabel'
            FROM study_versions WHERE study_id = \(studyId) ORDER BY version
            """, logger: logger)
        var records: [StudyVersionRecord] = []
        let decoder = JSONDecoder()
        for try await (version, consent, activities, changes, at, by, label) in rows.decode(
            (Int, Int, String, String, Date, String, String?).self)
        {
            records.append(StudyVersionRecord(
                version: version, label: label ?? VersionCounters.label(version), consentVersion: consent,
                activityVersions: try decoder.decode([String: Int].self, from: Data(activities.utf8)),
                changes: try decoder.decode(StudyChanges.self, from: Data(changes.utf8)), publishedAt: at, publishedBy: by))
        }
        return records
    }

    /// A frozen version's document, as JSON text.
    package func document(studyId: String, version: Int) async throws -> String? {
        let rows = try await client.query(
            "SELECT document::text FROM study_versions WHERE study_id = \(studyId) AND version = \(version)", logger: logger)
        for try await text in rows.decode(String.self) { return text }
        return nil
    }
}
