import Foundation
import JSONText
import ResponseCore
import Synchronization

/// A study's lists, and a sandbox that answers canned rows, in memory: the queries it was given
/// (the SQL the translator wrote, the scope, whether a total was asked for) are kept to be read.
package final class InMemoryQueries: StudyListCatalogs, QuerySandbox, Sendable {
    package struct Ran: Sendable, Equatable {
        package var sql: String
        package var scope: SandboxedQueries.Scope
        package var countTotal: Bool
    }

    private struct State {
        var catalogs: [String: QueryTranslator.Catalog] = [:]
        var rows: [[JSONValue]] = []
        var ran: [Ran] = []
    }

    private let state = Mutex(State())
    package let maxRows: Int

    package init(maxRows: Int = 1_000) {
        self.maxRows = maxRows
    }

    package func add(_ catalog: QueryTranslator.Catalog, studyKey: String) { state.withLock { $0.catalogs[studyKey] = catalog } }
    package func answer(_ rows: [[JSONValue]]) { state.withLock { $0.rows = rows } }
    package var ran: [Ran] { state.withLock { $0.ran } }

    package func catalog(studyKey: String) async throws -> QueryTranslator.Catalog? { state.withLock { $0.catalogs[studyKey] } }

    package func run(_ translation: QueryTranslator.Translation, scope: SandboxedQueries.Scope, countTotal: Bool)
        async throws(QueryError) -> SandboxedQueries.Result
    {
        state.withLock { state in
            state.ran.append(Ran(sql: translation.sql, scope: scope, countTotal: countTotal))
            return SandboxedQueries.Result(
                columns: translation.columns, storages: translation.storages.map { $0 ?? "VARCHAR" }, rows: state.rows,
                total: countTotal ? state.rows.count : nil)
        }
    }
}
