import AdminContracts
import ConsoleCore
import Foundation
import Hummingbird
import JSONText
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's response data (`/studies/{studyId}/data`), over the response service's admin API:
/// its tables with their row counts, each table as a data grid (sorted by any column either way,
/// filtered by participant and day, paged by cursor, child tables reached from their parent
/// rows), and the exports, passed on as they stream.
package struct ResponseDataRoutes: Sendable {
    let pages: ConsolePages

    static let pageSize = 50

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/data", use: overview)
        router.get("/studies/:studyId/data/export.zip") { try await export($0, $1, AdminCalls.exportZip) }
        router.get("/studies/:studyId/data/export.jsonl") { try await export($0, $1, AdminCalls.exportJSONLines) }
        router.get("/studies/:studyId/data/tables/:table", use: grid)
    }

    @Sendable func overview(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            async let tables = pages.api.responseTables(of: studyId, token: session.token, logger: context.logger)
            let state = try await pages.load(studyId, session: session, context: context)
            let reply = try await tables
            let list = reply.tables
            let rows = list.reduce(0) { $0 + $1.rows }
            let failed = (reply.failedByActivity ?? [:]).sorted { $0.key < $1.key }.map { activity, count in
                DataView.Failed(
                    activityId: activity, count: count.formatted(), responses: count == 1 ? "response" : "responses",
                    href: "/studies/\(AdminAPIClient.segment(studyId))/processing" + AdminAPIClient.queryString([("activity", activity)]))
            }
            let view = DataView(
                tables: list.map { table in
                    .init(
                        name: table.name, href: Self.tableHref(studyId, table.name), parent: table.parent ?? "", isChild: table.parent != nil,
                        rows: Self.count(table.rows, exact: table.rowsExact ?? true), columns: table.columns.filter { !$0.system }.count)
                },
                hasTables: !list.isEmpty, totalRows: Self.count(rows, exact: list.allSatisfy { $0.rowsExact ?? true }),
                // What the export's progress counts: a line per row, and a line of columns per table
                // (the CSV files' headers, the JSON lines' column lines); the zip's manifest is one more.
                exportLines: rows, exportFiles: list.count, exportZipExtra: list.count + 1, mayExport: (state.role ?? .viewer) >= .editor,
                failed: failed, hasFailed: !failed.isEmpty)
            return pages.render(view, title: "Response data · \(state.summary.name)", session: session, state: state, current: "data")
        }
    }

    /// A row count as the page shows it: a large table's is the database's estimate, said so.
    static func count(_ rows: Int, exact: Bool) -> String {
        exact ? rows.formatted() : "about " + rows.formatted()
    }

    @Sendable func grid(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let tableName = try context.parameters.decoded("table")
        let parameters = request.uri.queryParameters
        func value(_ name: String, limit: Int = 100) -> String {
            String((parameters[Substring(name)].map(String.init) ?? "").prefix(limit)).trimmingCharacters(in: .whitespaces)
        }
        let filters = [("participant", value("participant")), ("from", value("from")), ("to", value("to")), ("parent", value("parent"))]
        let sort = value("sort", limit: 200)
        let order = value("order") == "desc" ? "desc" : ""
        let after = value("after", limit: 2048)
        return try await pages.signedIn(request, context) { session, _ in
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.tableRows(
                    tableName, of: studyId,
                    query: filters + [("sort", sort), ("order", order), ("after", after), ("limit", String(Self.pageSize))],
                    token: session.token, logger: context.logger)
            }
            let state = try await pages.load(studyId, session: session, context: context)
            let given = { (name: String) -> String? in filters.first { $0.0 == name }.flatMap { $0.1.isEmpty ? nil : $0.1 } }
            let result: TableRowsPage
            var problemReport: ProblemReport?
            switch outcome {
            case .success(let rows): result = rows
            case .failure(let error):
                guard error.status == 400 else { throw error }
                // A filter the service refused: the table's first page, with the reason.
                problemReport = ProblemReport(heading: "These filters cannot be used", [ValidationProblem(pointer: "", message: error.message)])
                result = try await pages.api.tableRows(
                    tableName, of: studyId, query: [("limit", String(Self.pageSize))], token: session.token, logger: context.logger)
            }
            let base = Self.tableHref(studyId, result.table)
            let keyIndex = result.columns.firstIndex { $0.name == "Key" }
            let participantIndex = result.columns.firstIndex { $0.name == "ParticipantId" }
            let view = DataTableView(
                dataHref: "/studies/\(AdminAPIClient.segment(studyId))/data",
                filter: .init(participant: given("participant"), from: given("from"), to: given("to"), parent: given("parent")),
                problemReport: problemReport,
                // The table as the service names it (the path may have had another case).
                table: .init(name: result.table, parent: result.parent), hasParent: result.parent != nil,
                parentHref: result.parent.map { Self.tableHref(studyId, $0) } ?? "",
                clearHref: base + AdminAPIClient.queryString([("parent", value("parent"))]),
                columnCount: result.columns.count,
                columns: result.columns.enumerated().map { index, column in
                    let current = column.name == result.sort
                    let flip = current && result.order == "asc"
                    return .init(
                        name: column.name, type: column.maxLength.map { "text ≤ \($0)" } ?? column.type,
                        numeric: column.type == "number" || column.type == "key",
                        href: base + AdminAPIClient.queryString(filters + [("sort", column.name), ("order", flip ? "desc" : "asc")]),
                        ariaSort: current ? (result.order == "desc" ? "descending" : "ascending") : "none", index: index)
                },
                rows: result.rows.map { row in
                    let key = keyIndex.flatMap { row.indices.contains($0) ? Self.text(row[$0]) : nil } ?? ""
                    return .init(
                        key: key, cells: Self.cells(row, columns: result.columns, participantIndex: participantIndex, studyId: studyId, base: base),
                        children: result.children.map { child in
                            .init(name: child, href: Self.tableHref(studyId, child) + AdminAPIClient.queryString([("parent", key)]))
                        })
                },
                hasRows: !result.rows.isEmpty, hasChildren: !result.children.isEmpty, sort: result.sort, order: result.order,
                isFirstPage: after.isEmpty, firstHref: base + AdminAPIClient.queryString(filters + [("sort", sort), ("order", order)]),
                nextHref: result.next.map { base + AdminAPIClient.queryString(filters + [("sort", sort), ("order", order), ("after", $0)]) })
            return pages.render(
                view, title: "\(tableName) · Response data · \(state.summary.name)", session: session, state: state, current: "data")
        }
    }

    /// A row's cells, written here rather than by the template: a page is 50 rows of up to a few
    /// hundred columns, and a template draws each cell from values looked up by name, which cost
    /// most of the page's time. The same markup the template would draw: a number or key right
    /// aligned, a missing value marked, and a participant number linked to their page and to
    /// their rows alone (the same person the participants list names by it).
    static func cells(_ row: [JSONValue], columns: [TableColumn], participantIndex: Int?, studyId: String, base: String) -> SafeHTML {
        var cells = MarkupWriter(capacity: row.count * 32)
        for (index, value) in row.enumerated() {
            let type = columns.indices.contains(index) ? columns[index].type : "text"
            cells.open("td", [("class", type == "number" || type == "key" ? "number" : nil)])
            let text = Self.text(value)
            if value == .null {
                cells.open("span", [("class", "missing"), ("title", "no value")])
                cells.out += "—"
                cells.close("span", newline: false)
            } else if index == participantIndex {
                cells.open("a", [("href", "/studies/\(AdminAPIClient.segment(studyId))/participants/\(text)"), ("title", "Participant \(text)'s page")])
                cells.text(text)
                cells.close("a", newline: false)
                cells.out += " "
                let label = "Only participant \(text)'s rows"
                cells.open("a", [("href", base + AdminAPIClient.queryString([("participant", text)])), ("class", "row-filter"), ("title", label), ("aria-label", label)])
                cells.out += "rows"
                cells.close("a", newline: false)
            } else {
                cells.text(text)
            }
            cells.close("td", newline: false)
        }
        return cells.html
    }

    /// The export, passed on as the response service streams it (editors; the service audits it).
    func export(
        _ request: Request, _ context: ServiceRequestContext, _ endpoint: AdminEndpoint<NoContent, OpaqueBody>
    ) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            try await pages.api.download(endpoint, ["studyId": studyId], token: session.token, logger: context.logger).response
        }
    }

    static func tableHref(_ studyId: String, _ table: String) -> String {
        "/studies/\(AdminAPIClient.segment(studyId))/data/tables/\(AdminAPIClient.segment(table))"
    }

    /// A value as the grid shows it: numbers without a needless `.0`, text and dates as stored.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            let value = number.double
            if !number.isExactDouble { return number.description }
            if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
            return String(value)
        case .string(let text): return text
        default: return value.text ?? ""
        }
    }
}

/// `data.mustache`: the study's response tables and the exports.
struct DataView: PageView {
    static let template = "data"

    struct Table {
        var name: String
        var href: String
        var parent: String
        var isChild: Bool
        var rows: String
        /// The columns of answers (not the system's own).
        var columns: Int
    }

    var tables: [Table]
    var hasTables: Bool
    var totalRows: String
    /// What the export's progress bar counts to.
    var exportLines: Int
    var exportFiles: Int
    var exportZipExtra: Int
    var mayExport: Bool

    /// An activity some of whose responses failed processing, linked to them.
    struct Failed {
        var activityId: String
        var count: String
        var responses: String
        var href: String
    }

    var failed: [Failed]
    var hasFailed: Bool
}

/// `data-table.mustache`: a page of one response table's rows, filtered and sorted.
struct DataTableView: PageView {
    static let template = "data-table"

    /// The filters given (nil: not given).
    struct Filter {
        var participant: String?
        var from: String?
        var to: String?
        var parent: String?
    }

    struct TableName {
        var name: String
        var parent: String?
    }

    struct Column {
        var name: String
        var type: String
        var numeric: Bool
        /// The heading's link: sorted by this column.
        var href: String
        var ariaSort: String
        var index: Int
    }

    struct ChildLink {
        var name: String
        var href: String
    }

    struct Row {
        var key: String
        /// The row's cells, drawn (`ResponseDataRoutes.cells`).
        var cells: SafeHTML
        var children: [ChildLink]
    }

    var dataHref: String
    var filter: Filter
    var problemReport: ProblemReport?
    var table: TableName
    var hasParent: Bool
    var parentHref: String
    var clearHref: String
    var columnCount: Int
    var columns: [Column]
    var rows: [Row]
    var hasRows: Bool
    var hasChildren: Bool
    var sort: String
    var order: String
    var isFirstPage: Bool
    var firstHref: String
    var nextHref: String?
}
