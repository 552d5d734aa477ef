import PostgresNIO
import RegistrationCore
import ResponseCore
import ServiceKit
import StudyMetadataCore
import Testing
import TestSupport

/// Deleting a row makes PostgreSQL find every row that refers to it; without an index on the
/// referring column that is a read of the whole referring table for each row deleted (a study's
/// responses deleted against all of Sage's archives took minutes). Every foreign key leads an
/// index, but those whose parent rows are never deleted nor re-keyed, each listed with that reason.
@Suite struct ForeignKeyIndexTests {
    /// Keys whose parents stay: nothing deletes these rows (they are retired by a column instead).
    static let parentsNeverDeleted: [String: String] = [
        "admin_invitations.admin_invitations_admin_id_fkey": "admins are disabled, never deleted",
        "app_credentials.app_credentials_app_id_fkey": "apps are never deleted",
        "studies.studies_app_id_fkey": "apps are never deleted",
        "notifications.notifications_study_id_fkey": "studies are deactivated, never deleted",
        "invitations.invitations_site_id_fkey": "sites are decommissioned, never deleted",
        "participant_studies.participant_studies_site_id_fkey": "sites are decommissioned, never deleted",
        "push_outbox.push_outbox_notification_id_fkey": "received notifications are kept",
        "response_lists.response_lists_parent_id_fkey": "a study's lists are never deleted",
        "sage_uploads.sage_uploads_study_key_fkey": "studies are never deleted",
    ]

    static func migrations(of service: String) -> [Migration] {
        switch service {
        case "study-metadata": StudyMetadataMigrations.all
        case "registration": RegistrationMigrations.all
        default: ResponseMigrations.all
        }
    }

    @Test(.needsCluster, arguments: ["study-metadata", "registration", "response"])
    func everyForeignKeyLeadsAnIndex(service: String) async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
                _ = try await Migrator(client: client, migrations: ServiceKitMigrations.all + Self.migrations(of: service), logger: logger)
                    .migrate()
                var keys = 0
                for try await _ in try await client.query("SELECT 1 FROM pg_constraint WHERE contype = 'f'", logger: logger) {
                    keys += 1
                }
                #expect(keys > 0, "\(service) has no foreign keys: the check below would pass vacuously")
                // A key's columns must be the leading columns of some index on its table.
                let rows = try await client.query(
                    """
                    SELECT c.conrelid::regclass::text, c.conname FROM pg_constraint c
                    WHERE c.contype = 'f' AND NOT EXISTS (
                        SELECT 1 FROM pg_index i
                        WHERE i.indrelid = c.conrelid
                          AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] @> c.conkey
                          AND (i.indkey::int2[])[0:cardinality(c.conkey) - 1] <@ c.conkey)
                    ORDER BY 1, 2
                    """, logger: logger)
                var missing: [String] = []
                for try await (table, constraint) in rows.decode((String, String).self) where Self.parentsNeverDeleted["\(table).\(constraint)"] == nil {
                    missing.append("\(table).\(constraint)")
                }
                #expect(missing == [], "\(service): foreign keys with no index to find their rows by")
            }
        }
    }
}
