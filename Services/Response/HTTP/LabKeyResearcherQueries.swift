import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// LabKey's query calls for researchers: `getQuery` and `selectRows`, `executeSql`, and the
/// listings `getSchemas`, `getQueries` and `getQueryDetails`, over a study's `lists` and
/// `mobileappstudy` schemas (`ResearcherSchemas`). Every query is translated from its parsed form
/// (`QueryTranslator`) and run in the sandbox with the study's scope (`SandboxedQueries`).
package struct LabKeyResearcherQueries: Sendable {
    package let tables: StudyTables
    /// Nil when no reader role is configured: then only the listings answer.
    package let queries: SandboxedQueries?

    package init(tables: StudyTables, queries: SandboxedQueries?) {
        self.tables = tables
        self.queries = queries
    }

    /// A caller's query on one study.
    package struct Context: Sendable {
        package var study: StudyCatalog.Study
        package var caller: UUID
        package var parameters: LabKeyResearcherRequest
    }

    package func getQuery(_ context: Context) async throws -> Response {
        let format = try LabKeyQueryReply.Format(apiVersion: context.parameters.first("apiVersion"))
        let catalogs = try await catalogs(context.study)
        let (schemaName, catalog) = try schema(context.parameters, catalogs)
        guard let queryName = ResponseRoutes.nonBlank(context.parameters.first("query.queryName") ?? context.parameters.first("queryName")) else {
            throw LabKeyCall.invalid([.init(field: "queryName", message: "No value was supplied for the required parameter 'queryName'")])
        }
        guard let table = catalog.table(queryName) else { throw Self.queryNotFound(queryName, schema: schemaName) }
        let queries = try sandbox()
        let countTotal = context.parameters.first("includeTotalCount")?.lowercased() != "false"
        var parameters = context.parameters.values
        parameters["query.queryName"] = [table.name]
        do {
            let request = try SelectRowsRequest(parameters: parameters, catalog: catalog)
            let translator = QueryTranslator(schemas: catalogs, defaultSchema: schemaName, maxRows: queries.maxRows)
            let scope = SandboxedQueries.Scope.study(key: context.study.key, caller: context.caller)
            let result =
                countTotal
                ? try await queries.page(request.statement, translator: translator, scope: scope)
                : try await queries.run(translator.translate(request.statement), scope: scope)
            let key = ResearcherSchemas.keyColumn(schema: schemaName, table: table)
            return reply(
                LabKeyQueryReply.rows(
                    schemaName: schemaName, queryName: table.name, format: format,
                    fields: fields(result, key: key), rows: result.rows, rowCount: result.total ?? result.rows.count))
        } catch {
            // Everything the block throws is a QueryError (typed throws).
            throw LabKeyCall.invalid([.init(field: "query", message: error.message)])
        }
    }

    package func executeSQL(_ context: Context) async throws -> Response {
        let format = try LabKeyQueryReply.Format(apiVersion: context.parameters.first("apiVersion"))
        let catalogs = try await catalogs(context.study)
        let (schemaName, _) = try schema(context.parameters, catalogs)
        guard let text = ResponseRoutes.nonBlank(context.parameters.first("sql")) else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "No value was supplied for the required parameter 'sql'")])
        }
        guard text.utf8.count <= QueryRoutes.maxSQLBytes * 3 else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "The query is longer than \(QueryRoutes.maxSQLBytes) bytes.")])
        }
        guard let sql = LabKeyResearcherRequest.decodedSQL(text) else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "The sql parameter's encoded text could not be decoded.")])
        }
        guard sql.utf8.count <= QueryRoutes.maxSQLBytes else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "The query is longer than \(QueryRoutes.maxSQLBytes) bytes.")])
        }
        let queries = try sandbox()
        do {
            var statement = try QueryParser.parse(sql)
            try Self.apply(context.parameters, to: &statement)
            let translation = try QueryTranslator(schemas: catalogs, defaultSchema: schemaName, maxRows: queries.maxRows)
                .translate(statement)
            let result = try await queries.run(translation, scope: .study(key: context.study.key, caller: context.caller))
            return reply(
                LabKeyQueryReply.rows(
                    schemaName: schemaName, queryName: "sql", format: format, fields: fields(result, key: nil),
                    rows: result.rows, rowCount: result.total ?? result.rows.count))
        } catch {
            throw LabKeyCall.invalid([.init(field: "sql", message: error.message)])
        }
    }

    /// `executeSql`'s own paging and sorting, applied on top of the query's: `maxRows` and
    /// `offset`, and `query.sort` when the query has no ORDER BY.
    /// Both counts are bounded where they are read (`QueryStatement.rowCounts`), the query's own
    /// too, so their sum cannot overflow.
    static func apply(_ parameters: LabKeyResearcherRequest, to statement: inout QueryStatement) throws(QueryError) {
        if let maxRows = try QueryStatement.pagingCount(parameters.first("maxRows") ?? parameters.first("query.maxRows"), for: "maxRows") {
            statement.limit = min(statement.limit ?? maxRows, maxRows)
        }
        if let offset = try QueryStatement.pagingCount(parameters.first("offset") ?? parameters.first("query.offset"), for: "offset"),
            offset > 0
        {
            statement.offset = (statement.offset ?? 0) + offset
        }
        if statement.orderBy.isEmpty, let sort = parameters.first("query.sort") ?? parameters.first("sort") {
            statement.orderBy = sort.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                .map { term in
                    let descending = term.hasPrefix("-")
                    return QueryOrder(expression: .column(qualifier: nil, name: descending ? String(term.dropFirst()) : term), descending: descending)
                }
        }
    }

    package func getSchemas(_ context: Context) async throws -> Response {
        let version = Double(context.parameters.first("apiVersion") ?? "") ?? 0
        guard version >= 9.3 else {
            return try reply(.object(["schemas": .array(ResearcherSchemas.names.map(JSONValue.string))]))
        }
        var schemas: JSONObject = [:]
        for name in ResearcherSchemas.names {
            schemas[name] = .object([
                "schemaName": .string(name), "fullyQualifiedName": .string(name),
                "description": .string(ResearcherSchemas.descriptions[name] ?? ""), "hidden": .bool(false), "schemas": .object([:]),
            ])
        }
        return try reply(.object(schemas))
    }

    package func getQueries(_ context: Context) async throws -> Response {
        let catalogs = try await catalogs(context.study)
        let (schemaName, catalog) = try schema(context.parameters, catalogs)
        let includeColumns = context.parameters.first("includeColumns")?.lowercased() != "false"
        let queries: [JSONValue] = catalog.orderedTables.map { table in
            var query = Self.describe(table)
            if includeColumns {
                query["columns"] = .array(table.columns.map { column in
                    .object([
                        "name": .string(column.name), "caption": .string(column.name), "description": .string(""),
                        "type": .string(LabKeyQueryReply.Field(name: column.name, storage: column.storage).jsonType),
                    ])
                })
            }
            return .object(query)
        }
        return try reply(.object(["schemaName": .string(schemaName), "queries": .array(queries)]))
    }

    package func getQueryDetails(_ context: Context) async throws -> Response {
        let catalogs = try await catalogs(context.study)
        let (schemaName, catalog) = try schema(context.parameters, catalogs)
        guard let queryName = ResponseRoutes.nonBlank(context.parameters.first("queryName") ?? context.parameters.first("query.queryName")) else {
            throw LabKeyCall.invalid([.init(field: "queryName", message: "No value was supplied for the required parameter 'queryName'")])
        }
        guard let table = catalog.table(queryName) else { throw Self.queryNotFound(queryName, schema: schemaName) }
        let key = ResearcherSchemas.keyColumn(schema: schemaName, table: table)
        let columns: [JSONValue] = table.columns.map { column in
            guard case .object(var described) = LabKeyQueryReply.Field(name: column.name, storage: column.storage, isKey: column.name == key).json
            else { return .null }
            if let lookup = Self.lookup(column, in: table, schema: schemaName) { described["lookup"] = lookup }
            return .object(described)
        }
        var details = Self.describe(table)
        details["schemaName"] = .string(schemaName)
        details["columns"] = .array(columns)
        details["defaultView"] = .object([
            "columns": .array(table.columns.map { .object(["name": .string($0.name), "key": .string($0.name), "fieldKey": .string($0.name)]) })
        ])
        details["views"] = .array([])
        return try reply(.object(details))
    }

    /// What a child table's parent column and every `ParticipantId` point at, as LabKey's lookups.
    static func lookup(_ column: QueryTranslator.Catalog.Column, in table: QueryTranslator.Catalog.Table, schema: String) -> JSONValue? {
        if let parent = table.parent, column.system, column.name.lowercased() == (parent + "Id").lowercased() {
            return .object([
                "schemaName": .string(ResearcherSchemas.lists), "queryName": .string(parent), "keyColumn": .string("Key"),
                "displayColumn": .string("Key"), "isPublic": .bool(true),
            ])
        }
        if column.name == "ParticipantId", !(schema == ResearcherSchemas.mobileAppStudy && table.name == "Participant") {
            return .object([
                "schemaName": .string(ResearcherSchemas.mobileAppStudy), "queryName": .string("Participant"),
                "keyColumn": .string("ParticipantId"), "displayColumn": .string("ParticipantId"), "isPublic": .bool(true),
            ])
        }
        return nil
    }

    static func describe(_ table: QueryTranslator.Catalog.Table) -> JSONObject {
        [
            "name": .string(table.name), "title": .string(table.name), "description": .string(""), "hidden": .bool(false),
            "inherit": .bool(false), "isInherited": .bool(false), "isUserDefined": .bool(false), "canEdit": .bool(false),
            "isMetadataOverrideable": .bool(false), "snapshot": .bool(false),
        ]
    }

    private func catalogs(_ study: StudyCatalog.Study) async throws -> [String: QueryTranslator.Catalog] {
        ResearcherSchemas.catalogs(lists: try await tables.catalog(studyKey: study.key))
    }

    /// The schema the call names (`schemaName`, in any case), by its canonical name.
    private func schema(
        _ parameters: LabKeyResearcherRequest, _ catalogs: [String: QueryTranslator.Catalog]
    ) throws -> (String, QueryTranslator.Catalog) {
        guard let name = ResponseRoutes.nonBlank(parameters.first("schemaName") ?? parameters.first("query.schemaName")) else {
            throw LabKeyCall.invalid([.init(field: "schemaName", message: "No value was supplied for the required parameter 'schemaName'")])
        }
        guard let canonical = ResearcherSchemas.names.first(where: { $0 == name.lowercased() }), let catalog = catalogs[canonical] else {
            throw APIError(.notFound, code: "not_found", message: "Schema '\(name)' does not exist.")
        }
        return (canonical, catalog)
    }

    private func sandbox() throws -> SandboxedQueries {
        guard let queries else {
            throw APIError(.serviceUnavailable, code: "queries_unavailable", message: "Queries are not configured on this server.")
        }
        return queries
    }

    private func fields(_ result: SandboxedQueries.Result, key: String?) -> [LabKeyQueryReply.Field] {
        zip(result.columns, result.storages).map { LabKeyQueryReply.Field(name: $0, storage: $1, isKey: $0 == key) }
    }

    static func queryNotFound(_ name: String, schema: String) -> APIError {
        APIError(.notFound, code: "not_found", message: "Query '\(name)' in schema '\(schema)' doesn't exist.")
    }

    /// Written straight from the value: `LabKeyCall.reply` goes through `JSONEncoder` and pretty
    /// printing, too slow for a reply of 100,000 rows.
    private func reply(_ value: JSONValue) throws -> Response {
        LabKeyCall.reply(bytes: ByteBuffer(string: value.serialized(sortedKeys: true)))
    }

    private func reply(_ text: [UInt8]) -> Response {
        LabKeyCall.reply(bytes: ByteBuffer(bytes: text))
    }
}
