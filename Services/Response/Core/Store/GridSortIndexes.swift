import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit
import ServiceLifecycle
import Synchronization

/// The indexes that keep a data grid sorted by a question fast, built when a researcher first
/// sorts by it.
///
/// A response table has an index on its key and its participant, and none on its questions: every
/// index is written with every response stored, and most questions are never sorted by. Without
/// one, a page sorted by a question reads the whole table (on 100,000 rows of 30 answers, about
/// 40 MB) to find its 50 rows. So the first page sorted by a question asks for an index on the
/// value the grid sorts by and the key (the tie-break), and is read without it; the index is built
/// here in the background (`CREATE INDEX CONCURRENTLY`, which does not stop responses being
/// stored), one at a time, and the pages after it use it, either way (descending reads the index
/// backwards).
///
/// At most `maxPerTable` such indexes per table, so a researcher sorting by every column does not
/// multiply the cost of storing a response by the number of questions; past that, a sort reads the
/// table as before. (Each replica counts before it builds, so replicas racing for the last place
/// may each take it: the share is passed by at most one index per replica after the first.) Replicas build the same index under the same name: one builds it, the others
/// find it (valid, or being built by another, which they look at again later). A build that
/// failed leaves an invalid index behind; it is dropped and built again.
package final class GridSortIndexes: Service, Sendable {
    /// An index a sort asks for: on `expression` (the grid's sort value, written from the catalog's
    /// names, never from the request) and the key, of `table` in `schema`.
    package struct Wanted: Hashable, Sendable {
        package var schema: String
        package var table: String
        package var expression: String

        package init(schema: String, table: String, expression: String) {
            (self.schema, self.table, self.expression) = (schema, table, expression)
        }

        /// `grid_` and a digest of the table and the expression: unique in the schema, and
        /// within PostgreSQL's 63 bytes whatever the table is called.
        package var indexName: String {
            "grid_" + SHA256.hash(data: Data("\(table)\u{0}\(expression)".utf8)).hexString.prefix(24)
        }
    }

    package static let maxPerTable = 8
    /// How long a built index (or a table's full share) is trusted before a sort looks again: an
    /// index dropped meanwhile (a table restored from a backup) is built again within it.
    static let lookAgainAfter: Duration = .seconds(3600)

    let client: PostgresClient
    let logger: Logger
    let retryAfter: Duration
    /// When each index asked for may be asked for again.
    private let settled = Mutex<[Wanted: ContinuousClock.Instant]>([:])
    private let requests: AsyncStream<Wanted>
    private let continuation: AsyncStream<Wanted>.Continuation

    /// `retryAfter`: how long an index another replica is building, or whose build failed, is
    /// left before it is looked at again.
    package init(client: PostgresClient, logger: Logger, retryAfter: Duration = .seconds(300)) {
        self.client = client
        self.logger = logger
        self.retryAfter = retryAfter
        // A researcher's sorts queue at most one request per index (`want` keeps the rest out).
        (requests, continuation) = AsyncStream.makeStream(of: Wanted.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// Asks for `wanted` unless it is settled or on its way. Never waits.
    package func want(_ wanted: Wanted) {
        let now = ContinuousClock.now
        let isNew = settled.withLock { settled in
            if let until = settled[wanted], until > now { return false }
            // On its way: asked again only after `retryAfter`, unless it is settled for longer.
            settled[wanted] = now.advanced(by: retryAfter)
            return true
        }
        if isNew { continuation.yield(wanted) }
    }

    package func run() async throws {
        await withGracefulShutdownHandler {
            for await wanted in requests { await build(wanted) }
        } onGracefulShutdown: {
            self.continuation.finish()
        }
    }

    /// Builds `wanted` unless it is there, being built, or over the table's share.
    package func build(_ wanted: Wanted) async {
        let name = wanted.indexName
        let relation = "\(SQLName.quoted(wanted.schema)).\(SQLName.quoted(wanted.table))"
        let index = "\(SQLName.quoted(wanted.schema)).\(SQLName.quoted(name))"
        do {
            switch try await state(of: name, in: wanted.schema) {
            case .valid:
                settle(wanted)
                return
            case .beingBuilt:
                return  // by another replica: looked at again after `retryAfter`
            case .failed:
                logger.notice("dropping a data grid sort index whose build failed", metadata: ["index": "\(index)"])
                try await client.query(PostgresQuery(unsafeSQL: "DROP INDEX CONCURRENTLY IF EXISTS \(index)"), logger: logger)
            case .absent:
                break
            }
            guard try await gridIndexCount(on: wanted.table, in: wanted.schema) < Self.maxPerTable else {
                logger.notice(
                    "a data grid sort is read without an index: the table has its share of sort indexes",
                    metadata: ["table": "\(relation)", "sort": "\(wanted.expression)"])
                settle(wanted)
                return
            }
            let started = ContinuousClock.now
            try await client.query(
                PostgresQuery(unsafeSQL: "CREATE INDEX CONCURRENTLY IF NOT EXISTS \(SQLName.quoted(name)) ON \(relation) (\(wanted.expression), \"Key\")"),
                logger: logger)
            logger.info(
                "data grid sort index built",
                metadata: ["index": "\(index)", "table": "\(relation)", "sort": "\(wanted.expression)",
                           "seconds": "\((ContinuousClock.now - started).components.seconds)"])
            settle(wanted)
        } catch {
            // Settled until `retryAfter` by `want`: a later sort asks again then.
            logger.warning(
                "a data grid sort index could not be built", metadata: ["index": "\(index)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Built, or not to be built (the table has its share): looked at again after `lookAgainAfter`.
    private func settle(_ wanted: Wanted) {
        let until = ContinuousClock.now.advanced(by: Self.lookAgainAfter)
        settled.withLock { $0[wanted] = until }
    }

    enum IndexState { case absent, valid, beingBuilt, failed }

    /// An index by name: absent, valid, being built now (its build is in progress in some
    /// session), or left invalid by a build that failed.
    func state(of name: String, in schema: String) async throws -> IndexState {
        let rows = try await client.query(
            """
            SELECT i.indisvalid, EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_index i ON i.indexrelid = c.oid
            WHERE n.nspname = \(schema) AND c.relname = \(name)
            """, logger: logger)
        var state = IndexState.absent
        for try await (valid, building) in rows.decode((Bool, Bool).self) { state = valid ? .valid : building ? .beingBuilt : .failed }
        return state
    }

    /// How many grid sort indexes `table` has (valid or not).
    func gridIndexCount(on table: String, in schema: String) async throws -> Int {
        let rows = try await client.query(
            """
            SELECT count(*)::int FROM pg_index i
            JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = \(schema) AND t.relname = \(table) AND starts_with(c.relname, 'grid_')
            """, logger: logger)
        var count = 0
        for try await value in rows.decode(Int.self) { count = value }
        return count
    }
}
