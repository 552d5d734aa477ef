import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// LabKey's query calls for researchers: `getQuery` and `selectRows`, `executeSql`, and the
/// listings `getSchemas`, `getQueries` and `getQueryDetails`, over a study's `lists` and
/// `mobileappstudy` schemas (`ResearcherSchemas`). The `ResearcherQueries` use case picks the
/// schema and table, translates the query and runs it in the sandbox with the study's scope; this
/// reads LabKey's parameters and writes LabKey's replies.
package struct LabKeyResearcherQueries: Sendable {
    package let queries: ResearcherQueries

    package init(queries: ResearcherQueries) {
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
        let parameters = context.parameters
        let answer = try await queries.select(
            ResearcherQueries.Select(
                schemaName: Self.schemaName(parameters),
                queryName: ResponseRoutes.nonBlank(parameters.first("query.queryName") ?? parameters.first("queryName")),
                parameters: parameters.values, countTotal: parameters.first("includeTotalCount")?.lowercased() != "false"),
            on: context.study, caller: context.caller)
        return reply(answer, format: format)
    }

    package func executeSQL(_ context: Context) async throws -> Response {
        let format = try LabKeyQueryReply.Format(apiVersion: context.parameters.first("apiVersion"))
        let parameters = context.parameters
        guard let text = ResponseRoutes.nonBlank(parameters.first("sql")) else { throw ResearcherQueries.Refusal.invalid(ResearcherQueries.required("sql")) }
        guard text.utf8.count <= QueryRoutes.maxSQLBytes * 3 else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "The query is longer than \(QueryRoutes.maxSQLBytes) bytes.")])
        }
        guard let sql = LabKeyResearcherRequest.decodedSQL(text) else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "The sql parameter's encoded text could not be decoded.")])
        }
        guard sql.utf8.count <= QueryRoutes.maxSQLBytes else {
            throw LabKeyCall.invalid([.init(field: "sql", message: "The query is longer than \(QueryRoutes.maxSQLBytes) bytes.")])
        }
        let answer = try await queries.execute(
            ResearcherQueries.Execute(
                schemaName: Self.schemaName(parameters), sql: sql,
                maxRows: parameters.first("maxRows") ?? parameters.first("query.maxRows"),
                offset: parameters.first("offset") ?? parameters.first("query.offset"),
                sort: parameters.first("query.sort") ?? parameters.first("sort")),
            on: context.study, caller: context.caller)
        return reply(answer, format: format)
    }

    /// The schema the call names, as sent (`schemaName` or `query.schemaName`).
    static func schemaName(_ parameters: LabKeyResearcherRequest) -> String? {
        ResponseRoutes.nonBlank(parameters.first("schemaName") ?? parameters.first("query.schemaName"))
    }

    private func reply(_ answer: ResearcherQueries.Answer, format: LabKeyQueryReply.Format) -> Response {
        let result = answer.result
        return reply(
            LabKeyQueryReply.rows(
                schemaName: answer.schemaName, queryName: answer.queryName, format: format, fields: fields(result, key: answer.key),
                rows: result.rows, rowCount: result.total ?? result.rows.count))
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
        let catalogs = try await queries.catalogs(of: context.study)
        let (schemaName, catalog) = try ResearcherQueries.schema(Self.schemaName(context.parameters), in: catalogs)
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
        let catalogs = try await queries.catalogs(of: context.study)
        let (schemaName, catalog) = try ResearcherQueries.schema(Self.schemaName(context.parameters), in: catalogs)
        guard let queryName = ResponseRoutes.nonBlank(context.parameters.first("queryName") ?? context.parameters.first("query.queryName")) else {
            throw ResearcherQueries.Refusal.invalid(ResearcherQueries.required("queryName"))
        }
        guard let table = catalog.table(queryName) else { throw ResearcherQueries.Refusal.noQuery(queryName, schema: schemaName) }
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

    private func fields(_ result: SandboxedQueries.Result, key: String?) -> [LabKeyQueryReply.Field] {
        zip(result.columns, result.storages).map { LabKeyQueryReply.Field(name: $0, storage: $1, isKey: $0 == key) }
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

extension ResearcherQueries.Refusal: APIErrorConvertible {
    /// LabKey's answers: 400 with the problem, 404 for a schema or a query that does not exist,
    /// 503 when queries are not configured.
    package var apiError: APIError {
        switch self {
        case .invalid(let problem): LabKeyCall.invalid([problem])
        case .noSchema(let name): APIError(.notFound, code: "not_found", message: "Schema '\(name)' does not exist.")
        case .noQuery(let name, let schema):
            APIError(.notFound, code: "not_found", message: "Query '\(name)' in schema '\(schema)' doesn't exist.")
        case .unavailable:
            APIError(.serviceUnavailable, code: "queries_unavailable", message: "Queries are not configured on this server.")
        }
    }
}
