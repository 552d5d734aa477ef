import Logging
import NIOCore
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ServiceKit
import Testing
import TestSupport

/// An export reads a table in pages of its key: every row once, in order, whatever the table's
/// size against the page's; and a researcher who cancels the download midway (or whose connection
/// drops) leaves the database connection it read on as it found it: outside any transaction,
/// ready for the next request or worker round that borrows it from the pool.
@Suite struct StudyExportStreamingTests {
    struct DownloadCancelled: Error {}

    static let table = QueryTranslator.Catalog.Table(
        name: "t", sqlName: "t",
        columns: [
            .init(name: "Key", sqlName: "Key", storage: "INTEGER", system: true),
            .init(name: "note", sqlName: "note", storage: "VARCHAR"),
        ])
    static let catalog = QueryTranslator.Catalog(schema: "export", tables: ["t": table], order: ["t"])

    /// Pages of 20, 40, 80, 160, 320, 640 and then 1,000 rows (ending at 20, 60, 140, 300, 620,
    /// 1,260, 2,260): every count at and beside a page's end.
    @Test(.needsCluster, arguments: [0, 1, 19, 20, 21, 59, 60, 61, 619, 620, 621, 1_259, 1_260, 1_261, 2_260, 2_261])
    func everyRowIsExportedOnceInKeyOrder(rows: Int) async throws {
        // Keys with gaps, inserted out of order.
        try await withExportTable(
            #"INSERT INTO export.t ("Key", note) SELECT i * 3, 'row ' || i FROM generate_series(\#(rows), 1, -1) i"#
        ) { client, logger in
            var text = ""
            try await StudyExport(client: client, logger: logger).write(Self.catalog, studyKey: "S", as: .jsonLines) { chunk in
                text += String(buffer: chunk)
            }
            let lines = text.split(separator: "\n").dropFirst()  // the table's line of columns
            #expect(lines.count == rows)
            let expected = (0..<rows).map { #"{"table":"t","row":{"Key":\#(3 * ($0 + 1)),"note":"row \#($0 + 1)"}}"# }
            #expect(lines.map(String.init) == expected)
        }
    }

    @Test(.needsCluster, arguments: [StudyExport.Format.csvZip, .jsonLines])
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

                var chunks = 0
                await #expect(throws: DownloadCancelled.self) {
                    try await StudyExport(client: client, logger: logger).write(Self.catalog, studyKey: "S", as: format) { _ in
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

    /// A JSON-lines download starts before any row is read: its first chunk is the table's line of
    /// columns alone, as a zip's first is its file header; the rows follow in pages.
    @Test(.needsCluster) func aJSONLinesDownloadStartsWithTheTablesColumnsBeforeItsRows() async throws {
        try await withExportTable("INSERT INTO export.t (note) SELECT 'row ' || i FROM generate_series(1, 25) i") { client, logger in
            var chunks: [String] = []
            try await StudyExport(client: client, logger: logger).write(Self.catalog, studyKey: "S", as: .jsonLines) { chunk in
                chunks.append(String(buffer: chunk))
            }
            try #require(chunks.count >= 2)
            #expect(chunks[0].hasPrefix(#"{"table":"t""#) && chunks[0].contains(#""columns":"#), "\(chunks[0])")
            #expect(chunks[0].split(separator: "\n").count == 1 && chunks[0].hasSuffix("\n"), "\(chunks[0])")
            #expect(chunks.joined().split(separator: "\n").count == 26)
        }
    }

    /// A fresh database with the response service's tables (the export lists the study's Sage
    /// archives after its tables) and the catalog's table `export.t`, filled by `insert`.
    func withExportTable(_ insert: String, _ body: @Sendable (PostgresClient, Logger) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
            _ = try await Migrator(client: client, migrations: ServiceKitMigrations.all + ResponseMigrations.all, logger: logger)
                .migrate()
            try await client.query("CREATE SCHEMA export", logger: logger)
            try await client.query(#"CREATE TABLE export.t ("Key" bigserial PRIMARY KEY, note text)"#, logger: logger)
            try await client.query(PostgresQuery(unsafeSQL: insert), logger: logger)
            try await body(client, logger)
        }
        }
    }

    /// A download its client cancels is logged as such, at `info`; only other ends are errors.
    @Test func aCancelledDownloadIsNotLoggedAsAnError() {
        let logs = CapturedLogs()
        var logger = Logger(label: "export-log") { _ in CapturingLogHandler(records: logs) }
        logger.logLevel = .trace
        for cancelled: any Error in [
            ChannelError.ioOnClosedChannel, ChannelError.outputClosed, CancellationError(), IOError(errnoCode: EPIPE, reason: "writev"),
        ] {
            AdminExportRoutes.logEnded(early: cancelled, logger: logger)
        }
        AdminExportRoutes.logEnded(early: DownloadCancelled(), logger: logger)
        let lines = logs.lines.withLock { $0.map { "\($0.level) \($0.message)" } }
        #expect(lines.count == 5)
        #expect(lines.prefix(4).allSatisfy { $0 == "info export stopped: its client closed the connection" }, "\(lines)")
        #expect(lines.last == "error export failed", "\(lines)")
    }
}
