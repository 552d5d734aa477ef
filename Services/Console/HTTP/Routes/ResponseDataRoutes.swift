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
        router.get("/studies/:studyId/data/export.zip") { request, context in try await export(request, context, format: "zip") }
        router.get("/studies/:studyId/data/export.jsonl") { request, context in try await export(request, context, format: "jsonl") }
        router.get("/studies/:studyId/data/tables/:table", use: grid)
    }

    @Sendable func overview(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            async let tables = pages.api.responseTables(of: studyId, token: session.token, logger: context.logger)
            let state = try await pages.load(studyId, session: session, context: context)
            var page = pages.studyPage(
                title: "Response data · \(state.summary.name)", session: session, summary: state.summary, role: state.role,
                sections: state.sections, current: "data")
            let list = try await tables.tables
            page["tables"] = list.map { table -> [String: Any] in
                [
                    "name": table.name, "href": Self.tableHref(studyId, table.name), "parent": table.parent ?? "",
                    "isChild": table.parent != nil, "rows": table.rows.formatted(), "columns": table.columns.filter { !$0.system }.count,
                ]
            }
            page["hasTables"] = !list.isEmpty
            let rows = list.reduce(0) { $0 + $1.rows }
            page["totalRows"] = rows.formatted()
            // What the export's progress counts: a line per row, and a line of columns per table
            // (the CSV files' headers, the JSON lines' column lines); the zip's manifest is one more.
            page["exportLines"] = rows
            page["exportFiles"] = list.count
            page["exportZipExtra"] = list.count + 1
            page["mayExport"] = (state.role ?? .viewer) >= .editor
            return pages.renderer.page("data", page)
        }
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
            let outcome = await ConsolePages.outcome { () async throws(AdminAPIError) in
                try await pages.api.tableRows(
                    tableName, of: studyId,
                    query: filters + [("sort", sort), ("order", order), ("after", after), ("limit", String(Self.pageSize))],
                    token: session.token, logger: context.logger)
            }
            let state = try await pages.load(studyId, session: session, context: context)
            var page = pages.studyPage(
                title: "\(tableName) · Response data · \(state.summary.name)", session: session, summary: state.summary,
                role: state.role, sections: state.sections, current: "data")
            page["dataHref"] = "/studies/\(AdminAPIClient.segment(studyId))/data"
            // Only the filters given: an empty string would still open a template section.
            page["filter"] = Dictionary(uniqueKeysWithValues: filters.filter { !$0.1.isEmpty }.map { ($0.0, $0.1) })
            let result: TableRowsPage
            switch outcome {
            case .success(let rows): result = rows
            case .failure(let error):
                guard error.status == 400 else { throw error }
                // A filter the service refused: the table's first page, with the reason.
                page["problems"] = [StudyPageModels.item(ValidationProblem(pointer: "", message: error.message))]
                page["hasProblems"] = true
                page["problemsHeading"] = "These filters cannot be used"
                result = try await pages.api.tableRows(
                    tableName, of: studyId, query: [("limit", String(Self.pageSize))], token: session.token, logger: context.logger)
            }
            // The table as the service names it (the path may have had another case).
            page["table"] = ["name": result.table, "parent": result.parent ?? ""]
            page["hasParent"] = result.parent != nil
            page["parentHref"] = result.parent.map { Self.tableHref(studyId, $0) } ?? ""
            page["clearHref"] = Self.tableHref(studyId, result.table) + AdminAPIClient.queryString([("parent", value("parent"))])
            let base = Self.tableHref(studyId, result.table)
            page["columnCount"] = result.columns.count
            page["columns"] = result.columns.enumerated().map { index, column -> [String: Any] in
                let current = column.name == result.sort
                let flip = current && result.order == "asc"
                return [
                    "name": column.name, "type": column.maxLength.map { "text ≤ \($0)" } ?? column.type,
                    "numeric": column.type == "number" || column.type == "key",
                    "href": base + AdminAPIClient.queryString(filters + [("sort", column.name), ("order", flip ? "desc" : "asc")]),
                    "ariaSort": current ? (result.order == "desc" ? "descending" : "ascending") : "none",
                    "index": index,
                ]
            }
            let keyIndex = result.columns.firstIndex { $0.name == "Key" }
            let participantIndex = result.columns.firstIndex { $0.name == "ParticipantId" }
            page["rows"] = result.rows.map { row -> [String: Any] in
                let key = keyIndex.flatMap { row.indices.contains($0) ? Self.text(row[$0]) : nil } ?? ""
                var cells: [[String: Any]] = []
                for (index, value) in row.enumerated() {
                    let type = result.columns.indices.contains(index) ? result.columns[index].type : "text"
                    var cell: [String: Any] = [
                        "text": Self.text(value), "missing": value == .null, "numeric": type == "number" || type == "key",
                    ]
                    if index == participantIndex, value != .null {
                        // The number opens the person's page (the same person the participants
                        // list names by it); beside it, their rows alone.
                        cell["href"] = "/studies/\(AdminAPIClient.segment(studyId))/participants/number/\(Self.text(value))"
                        cell["linkLabel"] = "Participant \(Self.text(value))'s page"
                        cell["filterHref"] = base + AdminAPIClient.queryString([("participant", Self.text(value))])
                        cell["filterLabel"] = "Only participant \(Self.text(value))'s rows"
                    }
                    cells.append(cell)
                }
                return [
                    "key": key, "cells": cells,
                    "children": result.children.map { child in
                        ["name": child, "href": Self.tableHref(studyId, child) + AdminAPIClient.queryString([("parent", key)])]
                    },
                ]
            }
            page["hasRows"] = !result.rows.isEmpty
            page["hasChildren"] = !result.children.isEmpty
            page["sort"] = result.sort
            page["order"] = result.order
            page["isFirstPage"] = after.isEmpty
            page["firstHref"] = base + AdminAPIClient.queryString(filters + [("sort", sort), ("order", order)])
            if let next = result.next {
                page["nextHref"] = base + AdminAPIClient.queryString(filters + [("sort", sort), ("order", order), ("after", next)])
            }
            return pages.renderer.page("data-table", page)
        }
    }

    /// The export, passed on as the response service streams it (editors; the service audits it).
    func export(_ request: Request, _ context: ServiceRequestContext, format: String) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            try await pages.api.download(
                pages.api.exportPath(studyId, format: format), on: .response, token: session.token, logger: context.logger
            ).response
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
            if number.rounded() == number, abs(number) < 1e15 { return String(Int64(number)) }
            return String(number)
        case .string(let text): return text
        default: return value.text ?? ""
        }
    }
}
