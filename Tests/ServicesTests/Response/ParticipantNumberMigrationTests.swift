import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// Migration 33 on a database an earlier version filled: every participant gets a number in their
/// study in the order they enrolled, and every study table's `ParticipantId` (the service's own
/// key until then) becomes that number, its foreign key gone, even where the old keys and the new
/// numbers overlap under a unique index.
@Suite(.needsCluster) struct ParticipantNumberMigrationTests {
    @Test func anEarlierDatabasesTablesAreRenumberedPerStudy() async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
                let before = ServiceKitMigrations.all + ResponseMigrations.all.filter { $0.version < 33 }
                _ = try await Migrator(client: client, migrations: before, logger: logger).migrate()
                // Two studies, their participants interleaved as they enrolled; a table of each
                // as an earlier version made them (ParticipantId referring to participants.id),
                // one with a unique index over it, as RunAdherence has.
                for statement in [
                    """
                    INSERT INTO studies (study_key, study_id, app_id, org_id, status, version, event_at, event)
                    VALUES ('ALPHA', 'alpha', 'APP', 'ORG', 'active', 1, now(), '{}'), ('BETA', 'beta', 'APP', 'ORG', 'active', 1, now(), '{}')
                    """,
                    """
                    INSERT INTO participants (study_key, status, allow_data_sharing)
                    SELECT CASE WHEN n IN (2, 4, 5) THEN 'BETA' ELSE 'ALPHA' END, 'enrolled', 'NA' FROM generate_series(1, 6) n
                    """,
                    "INSERT INTO study_schemas (study_key, schema_name) VALUES ('ALPHA', 'alpha'), ('BETA', 'beta')",
                    "CREATE SCHEMA alpha", "CREATE SCHEMA beta",
                    #"CREATE TABLE alpha."Daily" ("Key" bigserial PRIMARY KEY, "ParticipantId" bigint NOT NULL REFERENCES public.participants (id))"#,
                    #"CREATE TABLE beta."Weeks" ("Key" bigserial PRIMARY KEY, "ParticipantId" bigint NOT NULL REFERENCES public.participants (id), "Week" int)"#,
                    #"CREATE UNIQUE INDEX ON beta."Weeks" ("ParticipantId", "Week")"#,
                    "INSERT INTO response_lists (study_key, name, sql_name) VALUES ('ALPHA', 'Daily', 'Daily'), ('BETA', 'Weeks', 'Weeks')",
                    #"INSERT INTO alpha."Daily" ("ParticipantId") SELECT id FROM participants WHERE study_key = 'ALPHA' ORDER BY id"#,
                    // Old keys 2, 4, 5 become 1, 2, 3: each new value is another row's old one.
                    #"INSERT INTO beta."Weeks" ("ParticipantId", "Week") SELECT id, 1 FROM participants WHERE study_key = 'BETA'"#,
                ] {
                    try await client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                _ = try await Migrator(client: client, migrations: ServiceKitMigrations.all + ResponseMigrations.all, logger: logger).migrate()

                func texts(_ sql: String) async throws -> [String] {
                    try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self).collect()
                }
                #expect(try await texts("SELECT study_key || ':' || id || '>' || number FROM participants ORDER BY id")
                    == ["ALPHA:1>1", "BETA:2>1", "ALPHA:3>2", "BETA:4>2", "BETA:5>3", "ALPHA:6>3"])
                #expect(try await texts(#"SELECT "ParticipantId"::text FROM alpha."Daily" ORDER BY "Key""#) == ["1", "2", "3"])
                #expect(try await texts(#"SELECT "ParticipantId"::text FROM beta."Weeks" ORDER BY "Key""#) == ["1", "2", "3"])
                #expect(try await texts(
                    "SELECT conname::text FROM pg_constraint WHERE contype = 'f' AND confrelid = 'public.participants'::regclass AND conrelid::regclass::text IN ('alpha.\"Daily\"', 'beta.\"Weeks\"')"
                ) == [], "the keys to participants.id are gone")
                // The next to enroll in each study takes the number after its last.
                try await client.query(
                    "INSERT INTO participants (study_key, status, allow_data_sharing) VALUES ('ALPHA', 'enrolled', 'NA'), ('BETA', 'enrolled', 'NA')",
                    logger: logger)
                #expect(try await texts("SELECT study_key || ':' || number FROM participants WHERE id > 6 ORDER BY id") == ["ALPHA:4", "BETA:4"])
            }
        }
    }
}
