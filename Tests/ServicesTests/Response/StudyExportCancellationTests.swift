import Logging
import NIOCore
import PostgresNIO
import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// A researcher who cancels an export's download midway (or whose connection drops) leaves the
/// database connection it read on as it found it: outside any transaction, ready for the next
/// request or worker round that borrows it from the pool.
@Suite struct StudyExportCancellationTests {
    struct DownloadCancelled: Error {}

    @Test(arguments: [StudyExport.Format.csvZip, .jsonLines])
    func aDownloadCancelledMidwayLeavesItsConnectionUsable(format: StudyExport.Format) async throws {
        try await TestDatabase.withFreshDatabase { url in
            // One connection in the pool: the request after the export gets the export's.
            var settings = try DatabaseSettings(url: url, setting: Setting("database.url"))
            settings.maxConnections = 1
            let client = PostgresClient(configuration: settings.clientConfiguration(applicationName: "studystack-tests"))
            let logger = Logger(label: "export-cancellation")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                try await client.query("CREATE SCHEMA export", logger: logger)
                try await client.query(#"CREATE TABLE export.t ("Key" bigserial PRIMARY KEY, note text)"#, logger: logger)
                try await client.query(
                    "INSERT INTO export.t (note) SELECT repeat('answer ', 20) || i FROM generate_series(1, 5000) i", logger: logger)
                let table = QueryTranslator.Catalog.Table(
                    name: "t", sqlName: "t",
                    columns: [
                        .init(name: "Key", sqlName: "Key", storage: "INTEGER", system: true),
                        .init(name: "note", sqlName: "note", storage: "VARCHAR"),
                    ])
                let catalog = QueryTranslator.Catalog(schema: "export", tables: ["t": table], order: ["t"])

                var chunks = 0
                await #expect(throws: DownloadCancelled.self) {
                    try await StudyExport(client: client, logger: logger).write(catalog, studyKey: "S", as: format) { _ in
                        chunks += 1
                        if chunks == 2 { throw DownloadCancelled() }
                    }
                }
                #expect(chunks == 2)
                // A write on the same connection: refused inside a read-only or aborted transaction.
                try await client.query("CREATE TABLE export.after (x int)", logger: logger)
                let open = try await client.query("SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'", logger: logger)
                    .decode(Int.self).reduce(0, +)
                #expect(open == 0)
            }
        }
    }
}
