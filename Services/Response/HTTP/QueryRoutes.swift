import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `selectRows` (LabKey's 8.3 format) and `executeSQL` (13.2 "reporting" format): a participant
/// reads their own rows of their study's tables (docs/response-api.md, Participant queries).
package struct QueryRoutes: Sendable {
    package struct SelectRowsReply: Encodable {
        package var schemaName = QueryTranslator.schemaName
        package var queryName: String
        package var formatVersion = 8.3
        package var rows: [JSONObject]
        package var rowCount: Int
    }

    package struct ExecuteSQLReply: Encodable {
        package struct Row: Encodable {
            package var data: [String: Cell]
        }

        package struct Cell: Encodable {
            package var value: JSONValue
        }

        package var schemaName = [QueryTranslator.schemaName]
        package var queryName = "sql"
        package var formatVersion = 13.2
        package var rows: [Row]
        package var rowCount: Int
    }

    /// The longest `sql` parsed: the apps' queries are a few hundred bytes.
    package static let maxSQLBytes = 16 * 1024

    package let responses: ResponseStore
    package let tables: StudyTables
    /// Nil when no reader role is configured.
    package let queries: SandboxedQueries?

    package init(responses: ResponseStore, tables: StudyTables, queries: SandboxedQueries?) {
        self.responses = responses
        self.tables = tables
        self.queries = queries
    }

    package func selectRows(_ call: LabKeyCall) async throws -> Response {
        let (participant, queries) = try await prepare(call)
        let catalog = try await catalog(participant, queries: queries)
        guard let parameters = call.parameters.stringKeyed(\.text) else {
            throw LabKeyCall.invalid([.init(field: "query", message: "Two parameter names differ only in Unicode normalisation.")])
        }
        do {
            let request = try SelectRowsRequest(parameters: parameters, catalog: catalog)
            let translator = QueryTranslator(catalog: catalog, maxRows: queries.maxRows, zone: queries.timeZone.identifier)
            let result = try await queries.page(request.statement, translator: translator, scope: .participant(participant.id))
            // By the columns' Unicode scalars: two names that differ only in normalisation stay two.
            let rows = result.rows.map { JSONObject(pairs: zip(result.columns, $0)) }
            return try LabKeyCall.reply(SelectRowsReply(queryName: request.queryName, rows: rows, rowCount: result.total ?? rows.count))
        } catch let error as QueryError {
            throw LabKeyCall.invalid([.init(field: "queryName", message: error.message)])
        }
    }

    package func executeSQL(_ call: LabKeyCall) async throws -> Response {
        let (participant, queries) = try await prepare(call)
        guard let sql = ResponseRoutes.nonBlank(call.string("sql")) else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "No value was supplied for the required parameter 'sql'")])
        }
        guard sql.utf8.count <= Self.maxSQLBytes else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "The query is longer than \(Self.maxSQLBytes) bytes.")])
        }
        let catalog = try await catalog(participant, queries: queries)
        do {
            let translation = try QueryTranslator(catalog: catalog, maxRows: queries.maxRows, zone: queries.timeZone.identifier)
                .translate(QueryParser.parse(sql))
            let result = try await queries.run(translation, participantId: participant.id)
            let rows = result.rows.map { values in
                ExecuteSQLReply.Row(
                    // Two columns whose names are one `String` key (canonically equal) keep the
                    // first, never trap: the names are the participant's own SQL.
                    data: Dictionary(zip(result.columns, values.map { ExecuteSQLReply.Cell(value: $0) })) { first, _ in first })
            }
            // Cut at the row limit, the count is the query's whole count: the caller sees it was cut.
            return try LabKeyCall.reply(ExecuteSQLReply(rows: rows, rowCount: result.total ?? rows.count))
        } catch let error as QueryError {
            throw LabKeyCall.invalid([.init(field: "sql", message: error.message)])
        }
    }

    /// The participant checks first, as in the original; then whether queries are served here.
    private func prepare(_ call: LabKeyCall) async throws -> (ResponseStore.Participant, SandboxedQueries) {
        let participant = try await ResponseRoutes.participant(call, responses: responses)
        guard let queries else {
            throw APIError(
                .serviceUnavailable, code: "queries_unavailable",
                message: "Participant queries are not configured on this server.")
        }
        return (participant, queries)
    }

    /// A study without tables yet has an empty catalog: every query is then "not found".
    private func catalog(_ participant: ResponseStore.Participant, queries: SandboxedQueries) async throws
        -> QueryTranslator.Catalog
    {
        try await tables.catalog(studyKey: participant.studyKey) ?? .init(schema: "", tables: [:])
    }
}
