import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import Testing
import TestSupport

/// A data grid's sort by a question builds its index once, in the background: never twice, never
/// more than a table's share, and again after a build that failed.
@Suite(.needsCluster) struct GridSortIndexesTests {
    /// The grid sort indexes of `grid.t`: name and definition.
    static func gridIndexes(_ client: PostgresClient, _ logger: Logger) async throws -> [(name: String, definition: String, valid: Bool)] {
        var found: [(String, String, Bool)] = []
        for try await row in try await client.query(
            """
            SELECT c.relname::text, pg_get_indexdef(c.oid), i.indisvalid FROM pg_index i
            JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = 'grid' AND t.relname = 't' AND starts_with(c.relname, 'grid_') ORDER BY 1
            """, logger: logger
        ).decode((String, String, Bool).self) { found.append(row) }
        return found
    }

    @Test func anIndexIsBuiltOnceWithinTheTablesShareAndAgainAfterAFailedBuild() async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
                let columns = (1...12).map { "q\($0)" }
                try await client.query("CREATE SCHEMA grid", logger: logger)
                try await client.query(
                    PostgresQuery(
                        unsafeSQL: #"CREATE TABLE grid.t ("Key" bigserial PRIMARY KEY, "# + columns.map { "\($0) int" }.joined(separator: ", ") + ")"),
                    logger: logger)
                try await client.query(
                    PostgresQuery(unsafeSQL: """
                        INSERT INTO grid.t (\(columns.joined(separator: ", ")))
                        SELECT \(columns.map { _ in "i % 7" }.joined(separator: ", ")) FROM generate_series(1, 1000) i
                        """), logger: logger)
                let indexes = GridSortIndexes(client: client, logger: logger)
                func wanted(_ column: String) -> GridSortIndexes.Wanted {
                    .init(schema: "grid", table: "t", expression: SQLName.quoted(column))
                }

                // A build that failed left an invalid index under the name the first sort wants
                // (a unique index over duplicates fails): it is dropped and built properly.
                let first = wanted("q1")
                await #expect(throws: PSQLError.self) {
                    try await client.query(
                        PostgresQuery(unsafeSQL: "CREATE UNIQUE INDEX CONCURRENTLY \(first.indexName) ON grid.t (q1)"), logger: logger)
                }
                let invalid = try await Self.gridIndexes(client, logger)
                #expect(invalid.count == 1 && invalid.first?.valid == false)
                await indexes.build(first)
                let built = try await Self.gridIndexes(client, logger)
                #expect(built.count == 1)
                #expect(built.first?.name == first.indexName)
                #expect(built.first?.valid == true)
                #expect(built.first?.definition.hasSuffix("USING btree (q1, \"Key\")") == true, "\(built)")

                // Asked again: nothing new.
                await indexes.build(first)
                #expect(try await Self.gridIndexes(client, logger).count == 1)

                // Every other column asked for: the table's share and no more.
                for column in columns.dropFirst() { await indexes.build(wanted(column)) }
                let all = try await Self.gridIndexes(client, logger)
                #expect(all.count == GridSortIndexes.maxPerTable)
                #expect(all.allSatisfy { $0.valid })
            }
        }
    }

    /// `want` never waits and asks once: a researcher paging through a sort asks for its index on
    /// every page; the service builds it once, in the background.
    @Test func askingAgainWhileAnIndexIsOnItsWayQueuesNothing() async throws {
        try await TestDatabase.withFreshDatabase { url in
            try await TestDatabase.withClient(url: url) { client, logger in
                try await client.query("CREATE SCHEMA grid", logger: logger)
                try await client.query(#"CREATE TABLE grid.t ("Key" bigserial PRIMARY KEY, q1 int)"#, logger: logger)
                let indexes = GridSortIndexes(client: client, logger: logger)
                let wanted = GridSortIndexes.Wanted(schema: "grid", table: "t", expression: #""q1""#)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await indexes.run() }
                    for _ in 0..<50 { indexes.want(wanted) }
                    let deadline = ContinuousClock.now.advanced(by: .seconds(30))
                    var found: [(name: String, definition: String, valid: Bool)] = []
                    while ContinuousClock.now < deadline {
                        found = try await Self.gridIndexes(client, logger)
                        if found.first?.valid == true { break }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    #expect(found.count == 1)
                    #expect(found.first?.valid == true)
                    group.cancelAll()
                }
            }
        }
    }
}
