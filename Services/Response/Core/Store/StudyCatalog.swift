import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The studies study-metadata has told this service about (its `StudyEvent`s), and the one
/// setting that belongs here: whether responses are collected.
package struct StudyCatalog: Sendable {
    package struct Study: Sendable, Equatable {
        /// The id as study-metadata spells it.
        package var studyId: String
        /// The upper-cased id the apps' `studyId` is matched on.
        package var key: String
        package var appId: String
        package var status: StudyEvent.Status
        package var version: Int
        package var collectionEnabled: Bool

        package init(studyId: String, key: String, appId: String, status: StudyEvent.Status, version: Int, collectionEnabled: Bool) {
            self.studyId = studyId
            self.key = key
            self.appId = appId
            self.status = status
            self.version = version
            self.collectionEnabled = collectionEnabled
        }
    }

    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    package static func key(_ studyId: String) -> String { studyId.uppercased() }

    package enum ApplyOutcome: Sendable, Equatable {
        case applied
        /// A newer event is stored (by version, then time); nothing changed.
        case stale
        /// The stored study has the same key but another spelling (`SECVX` against `secvx`).
        /// study-metadata refuses such ids, so this is a forged or buggy event: it is refused and
        /// the stored study keeps its id, its rows and its admins.
        case idConflict(stored: String)
    }

    /// Keeps `event` unless a newer one is stored (by version, then time: a pause keeps the version
    /// but comes later). An event never changes the id, and so the owner, of a stored study.
    package func apply(_ event: StudyEvent) async throws -> ApplyOutcome {
        // Kept in the internal API's form, as it came.
        let json = String(decoding: try InternalCoding.encoder.encode(event), as: UTF8.self)
        let key = Self.key(event.studyId)
        // The outer SELECT sees the row as it was before the upsert, so it tells which id was stored.
        // A study that is not in testing (it launched, or testing ended) keeps none of its
        // testers' data: removed in the same transaction, whichever event says so first.
        return try await client.withTransaction(logger: logger) { connection -> ApplyOutcome in
            let rows = try await connection.query(
                """
                WITH kept AS (
                    INSERT INTO studies (study_key, study_id, app_id, org_id, status, version, event_at, event)
                    VALUES (\(key), \(event.studyId), \(event.appId), \(event.orgId), \(event.status.rawValue),
                            \(event.version), \(event.at), \(json)::jsonb)
                    ON CONFLICT (study_key) DO UPDATE SET
                        app_id = excluded.app_id, org_id = excluded.org_id,
                        status = excluded.status, version = excluded.version, event_at = excluded.event_at,
                        event = excluded.event, updated_at = now()
                    WHERE studies.study_id = excluded.study_id
                      AND (studies.version, studies.event_at) <= (excluded.version, excluded.event_at)
                    RETURNING 1
                )
                SELECT EXISTS (SELECT 1 FROM kept), (SELECT study_id FROM studies WHERE study_key = \(key))
                """, logger: logger)
            var outcome = ApplyOutcome.stale
            for try await (kept, stored) in rows.decode((Bool, String?).self) {
                if kept {
                    outcome = .applied
                } else if let stored, stored != event.studyId {
                    logger.error(
                        "a study event tried to rename a stored study; refused",
                        metadata: ["stored": "\(stored)", "event": "\(event.studyId)"])
                    outcome = .idConflict(stored: stored)
                }
            }
            if outcome == .applied, event.status != .testing {
                _ = try await TestRunStore.remove(studyKey: key, audit: audit, on: connection, logger: logger)
            }
            return outcome
        }
    }

    package func study(_ studyId: String) async throws -> Study? {
        let rows = try await client.query(
            """
            SELECT study_id, study_key, app_id, status, version, collection_enabled FROM studies
            WHERE study_key = \(Self.key(studyId))
            """, logger: logger)
        for try await (id, key, app, status, version, enabled) in rows.decode((String, String, String, String, Int, Bool).self) {
            return Study(
                studyId: id, key: key, appId: app, status: StudyEvent.Status(rawValue: status) ?? .deactivated,
                version: version, collectionEnabled: enabled)
        }
        return nil
    }

    /// The arms the study's newest event names (none for a study without arms).
    package func arms(studyKey: String) async throws -> [String] {
        let rows = try await client.query(
            "SELECT coalesce(event->'arms'->'names', '[]'::jsonb)::text FROM studies WHERE study_key = \(studyKey)", logger: logger)
        for try await text in rows.decode(String.self) { return (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? [] }
        return []
    }

    /// Turns response collection on or off; false when the study is unknown.
    package func setCollection(_ studyId: String, enabled: Bool, actor: String) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                "UPDATE studies SET collection_enabled = \(enabled) WHERE study_key = \(Self.key(studyId)) RETURNING 1",
                logger: logger)
            var found = false
            for try await _ in rows { found = true }
            if found {
                try await audit.record(
                    actor: actor, action: enabled ? "study.collection_enabled" : "study.collection_disabled",
                    studyId: studyId, on: connection)
            }
            return found
        }
    }
}
