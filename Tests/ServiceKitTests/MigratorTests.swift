import Logging
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import Testing
import TestSupport

/// Forward-only migrations: ordering, exactly-once under concurrency, immutability.
@Suite struct MigratorTests {
    /// Three migrations that fail or double-count if applied twice.
    static let counterMigrations = [
        Migration(component: "test", version: 1, name: "create_counter", statements: ["CREATE TABLE counter (n integer)"]),
        Migration(component: "test", version: 2, name: "count_once", statements: ["INSERT INTO counter VALUES (1)"]),
        Migration(
            component: "test", version: 3, name: "add_column",
            statements: ["ALTER TABLE counter ADD COLUMN note text", "UPDATE counter SET note = 'ok'"]),
    ]

    @Test(.needsCluster) func appliesInOrderAndOnlyOnce() async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
                let migrator = try Migrator(client: client, migrations: Self.counterMigrations, logger: logger)
                #expect(try await migrator.pending().count == 3)
                let first = try await migrator.migrate()
                #expect(first.map(\.version) == [1, 2, 3])
                let second = try await migrator.migrate()
                #expect(second.isEmpty)
                #expect(try await migrator.pending().isEmpty)
                let rows = try await client.query("SELECT count(*)::int, min(note) FROM counter", logger: logger)
                let (count, note) = try await rows.decode((Int, String).self).single()
                #expect(count == 1)
                #expect(note == "ok")
            }
        }
    }

    @Test(.needsCluster) func concurrentRunnersApplyEachMigrationExactlyOnce() async throws {
        try await TestDatabase.withFreshDatabase { url in
            // Four "replicas", each with its own pool, start at the same moment.
            let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await TestDatabase.withClient(url: url) { client, logger in
                            try await Migrator(client: client, migrations: Self.counterMigrations, logger: logger)
                                .migrate().count
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(applied.reduce(0, +) == 3)
            try await TestDatabase.withClient(url: url) { client, logger in
                let counted = try await client.query("SELECT count(*)::int FROM counter", logger: logger)
                #expect((try await counted.decode(Int.self).single()) == 1)
                let recorded = try await client.query(
                    "SELECT count(*)::int FROM schema_migrations WHERE component = 'test'", logger: logger)
                #expect((try await recorded.decode(Int.self).single()) == 3)
            }
        }
    }

    @Test(.needsCluster) func refusesAMigrationChangedAfterItWasApplied() async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
                try await Migrator(client: client, migrations: Self.counterMigrations, logger: logger).migrate()
                var edited = Self.counterMigrations
                edited[1] = Migration(
                    component: "test", version: 2, name: "count_once", statements: ["INSERT INTO counter VALUES (2)"])
                let migrator = try Migrator(client: client, migrations: edited, logger: logger)
                let error = await #expect(throws: MigrationError.self) { try await migrator.migrate() }
                #expect(error?.kind == .checksumMismatch)
                #expect(error?.message.contains("test/0002_count_once was changed after it was applied") == true)
                // Readiness sees it too: the edited migration is not recorded with its checksum.
                #expect(try await migrator.pending().map(\.version) == [2])
            }
        }
    }

    @Test(.needsCluster) func aFailingMigrationLeavesNothingBehind() async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
                let broken = [
                    Migration(
                        component: "test", version: 1, name: "half_broken",
                        statements: ["CREATE TABLE kept (id int)", "CREATE TABLE broken (id nosuchtype)"])
                ]
                let migrator = try Migrator(client: client, migrations: broken, logger: logger)
                await #expect(throws: PSQLError.self) { try await migrator.migrate() }
                #expect(try await migrator.pending().count == 1)
                let rows = try await client.query("SELECT to_regclass('kept') IS NULL", logger: logger)
                #expect((try await rows.decode(Bool.self).single()))
            }
        }
    }

    @Test func refusesAnOutOfOrderList() throws {
        let list = [
            Migration(component: "test", version: 1, name: "a", statements: ["SELECT 1"]),
            Migration(component: "test", version: 3, name: "c", statements: ["SELECT 1"]),
        ]
        let client = PostgresClient(
            configuration: .init(host: "127.0.0.1", username: "x", password: nil, database: "x", tls: .disable))
        let error = #expect(throws: MigrationError.self) {
            try Migrator(client: client, migrations: list, logger: Logger(label: "test"))
        }
        #expect(error?.kind == .invalidList)
    }

    /// A service whose applied migration was edited stops at start with the migration named.
    @Test(.needsCluster) func aServiceWithAChangedMigrationStops() async throws {
        try await TestDatabase.withFreshDatabase { url in
            _ = try await TestDatabase.withClient(url: url) { client, logger in
                try await Migrator(
                    client: client, migrations: ServiceKitMigrations.all + Self.counterMigrations, logger: logger
                ).migrate()
            }
            var edited = Self.counterMigrations
            edited[0] = Migration(
                component: "test", version: 1, name: "create_counter", statements: ["CREATE TABLE counter (n bigint)"])
            let app = try makeApp(databaseURL: url, migrations: edited)
            let error = await #expect(throws: MigrationError.self) { try await app.run() }
            #expect(error?.kind == .checksumMismatch)
        }
    }
}
