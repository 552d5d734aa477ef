import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's response tables as data grids (viewer): the tables with their columns, types, child
/// tables and row counts, and a page of one table, sorted, filtered and paged
/// (docs/response-api.md, Response data grids).
///
/// Reading a page is not audited, unlike an export: the rows are pseudonymous (participants are
/// numbers), a page holds at most 500 of them, and a viewer may read them; taking the whole study
/// out is what the audit trail records.
package struct AdminTableRoutes {
    package let tables: StudyTables
    package let grid: TableGridStore
    /// The responses that failed, counted per activity beside the tables.
    package let responses: ResponseAdminStore

    package init(tables: StudyTables, grid: TableGridStore, responses: ResponseAdminStore) {
        self.tables = tables
        self.grid = grid
        self.responses = responses
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.responseTables, use: list)
        routes.on(AdminCalls.tableRows, use: rows)
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        // Failed responses are counted even for an activity with no table: all its answers may
        // have failed.
        let failed = try await responses.failedByActivity(studyKey: study.key).sorted { $0.key < $1.key }
            .map { "\(Self.string($0.key)):\($0.value)" }.joined(separator: ",")
        guard let lists = try await tables.catalog(studyKey: study.key) else {
            return Self.json("{\"tables\":[],\"failedByActivity\":{\(failed)}}")
        }
        let summaries = try await grid.tables(lists)
        let items = summaries.map { summary in
            "{\"name\":\(Self.string(summary.table.name)),\"parent\":\(summary.table.parent.map(Self.string) ?? "null"),"
                + "\"children\":[\(summary.children.map(Self.string).joined(separator: ","))],\"rows\":\(summary.rows),"
                + "\"rowsExact\":\(summary.rowsExact),"
                + "\"columns\":\(Self.columns(summary.table))}"
        }
        return Self.json("{\"tables\":[\(items.joined(separator: ","))],\"failedByActivity\":{\(failed)}}")
    }

    @Sendable package func rows(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> Response {
        let name = try context.parameters.decoded("table")
        guard let lists = try await tables.catalog(studyKey: study.key),
            let table = lists.table(name)
        else { throw ResponseAdminError.noTable(name) }
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.formParameters { parameters[String(key)] = String(value) }
        let query: TableGridQuery
        do {
            query = try TableGridQuery.parse(parameters, table: table)
        } catch {
            throw APIError.badRequest(error.message, field: error.field)
        }
        let page: TableGridStore.Page
        do {
            page = try await grid.page(query, of: table, in: lists)
        } catch where query.after != nil && PostgresErrors.isDataException(error) {
            // A cursor whose value passed the shape check but is no value of its type (a 13th
            // month): the caller's mistake, not the service's.
            throw APIError.badRequest("after must be the next cursor of a page sorted the same way", field: "after")
        }
        let children = lists.orderedTables.filter { $0.parent?.lowercased() == table.name.lowercased() }.map { Self.string($0.name) }
        var body = "{\"table\":\(Self.string(table.name)),\"parent\":\(table.parent.map(Self.string) ?? "null"),"
        body += "\"children\":[\(children.joined(separator: ","))],"
        body += "\"sort\":\(Self.string(query.sort)),\"order\":\"\(query.order.rawValue)\",\"columns\":\(Self.columns(table)),"
        body += "\"rows\":[\(page.rows.joined(separator: ","))]"
        if let next = page.next { body += ",\"next\":\"\(next.encoded)\"" }
        return Self.json(body + "}")
    }

    /// The columns with the types a grid shows: `key` for the system numbers, `number`,
    /// `date-time`, `boolean` and `text` (with its limit, if any).
    static func columns(_ table: QueryTranslator.Catalog.Table) -> String {
        let items = table.columns.map { column in
            let limit = column.maxLength.map { ",\"maxLength\":\($0)" } ?? ""
            return "{\"name\":\(string(column.name)),\"type\":\"\(column.typeName)\",\"system\":\(column.system)\(limit)}"
        }
        return "[" + items.joined(separator: ",") + "]"
    }

    static func string(_ text: String) -> String { StudyExport.jsonString(text) }

    /// The rows are PostgreSQL's own JSON for each value, so the reply is written as text
    /// rather than decoded and encoded again.
    static func json(_ body: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
