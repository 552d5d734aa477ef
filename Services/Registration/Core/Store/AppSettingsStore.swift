import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Each app's definition as study-metadata last sent it: the e-mail sender and texts, the support
/// and feedback addresses, and the releases `versionInfo` reports.
package struct AppSettingsStore: Sendable {
    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// Keeps `sync` unless a newer revision is already here; true when it was kept.
    package func save(_ sync: AppSettingsSync) async throws -> Bool {
        let definition = String(decoding: try JSONEncoder().encode(sync.app), as: UTF8.self)
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                INSERT INTO app_settings (app_id, org_id, revision, definition)
                VALUES (\(sync.app.appId), \(sync.app.orgId), \(sync.revision), \(definition)::jsonb)
                ON CONFLICT (app_id) DO UPDATE
                SET org_id = excluded.org_id, revision = excluded.revision, definition = excluded.definition,
                    received_at = now()
                WHERE app_settings.revision < excluded.revision
                RETURNING 1
                """, logger: logger)
            var kept = false
            for try await _ in rows { kept = true }
            if kept {
                try await audit.record(
                    actor: ServiceName.studyMetadata.rawValue, action: "app.settings_received",
                    details: ["appId": sync.app.appId, "revision": String(sync.revision)], on: connection)
            }
            return kept
        }
    }

    /// The app the apps' `applicationId` and `orgId` headers name, or nil when study-metadata has
    /// not sent it (or the org does not match).
    package func app(appId: String, orgId: String, on connection: PostgresConnection? = nil) async throws -> AppDefinition? {
        let query: PostgresQuery = "SELECT definition::text FROM app_settings WHERE app_id = \(appId) AND org_id = \(orgId)"
        let rows =
            if let connection { try await connection.query(query, logger: logger) } else {
                try await client.query(query, logger: logger)
            }
        for try await text in rows.decode(String.self) {
            return try JSONDecoder().decode(AppDefinition.self, from: Data(text.utf8))
        }
        return nil
    }

    /// The app by its id alone (an invitation names a study, and the study its app).
    package func app(appId: String) async throws -> AppDefinition? {
        let rows = try await client.query(
            "SELECT definition::text FROM app_settings WHERE app_id = \(appId) ORDER BY org_id LIMIT 1", logger: logger)
        for try await text in rows.decode(String.self) {
            return try JSONDecoder().decode(AppDefinition.self, from: Data(text.utf8))
        }
        return nil
    }
}
