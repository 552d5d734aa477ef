import Foundation
import StudyModels

/// The researchers' queries on one study (LabKey's `getQuery`/`selectRows` and `executeSql`, and
/// the schema and table the listings describe): the schema the call names, in any case; the query
/// parsed and paged as the call asks; translated against the study's `lists` and `mobileappstudy`
/// catalogs (`QueryTranslator`); run in the sandbox with the study's scope and the caller's query
/// slots. LabKey's reply formats stay with the route.
package struct ResearcherQueries: Sendable {
    /// Why a query is not run, in LabKey's words.
    package enum Refusal: Error, Sendable, Equatable {
        /// A parameter missing or unusable, or a query that does not parse or translate.
        case invalid(LabKeyProblem)
        case noSchema(String)
        case noQuery(String, schema: String)
        /// No reader role is configured: only the listings answer.
        case unavailable
    }

    /// `getQuery`/`selectRows`: a table of a schema, with LabKey's filter, sort and paging
    /// parameters as sent.
    package struct Select: Sendable {
        package var schemaName: String?
        package var queryName: String?
        package var parameters: [String: [String]]
        package var countTotal: Bool

        package init(schemaName: String?, queryName: String?, parameters: [String: [String]], countTotal: Bool) {
            self.schemaName = schemaName
            self.queryName = queryName
            self.parameters = parameters
            self.countTotal = countTotal
        }
    }

    /// `executeSql`: LabKey SQL, with the call's own paging and sorting on top of the query's.
    package struct Execute: Sendable {
        package var schemaName: String?
        package var sql: String
        package var maxRows: String?
        package var offset: String?
        package var sort: String?

        package init(schemaName: String?, sql: String, maxRows: String?, offset: String?, sort: String?) {
            self.schemaName = schemaName
            self.sql = sql
            self.maxRows = maxRows
            self.offset = offset
            self.sort = sort
        }
    }

    /// The rows, and what the reply says of them.
    package struct Answer: Sendable {
        package var schemaName: String
        package var queryName: String
        /// The table's key column, for the reply's field list.
        package var key: String?
        package var result: SandboxedQueries.Result
    }

    package let lists: any StudyListCatalogs
    /// Nil when no reader role is configured.
    package let sandbox: (any QuerySandbox)?

    package init(lists: any StudyListCatalogs, sandbox: (any QuerySandbox)?) {
        self.lists = lists
        self.sandbox = sandbox
    }

    package func select(_ query: Select, on study: StudyCatalog.Study, caller: UUID) async throws -> Answer {
        let catalogs = try await catalogs(of: study)
        let (schemaName, catalog) = try Self.schema(query.schemaName, in: catalogs)
        guard let queryName = query.queryName else { throw Refusal.invalid(Self.required("queryName")) }
        guard let table = catalog.table(queryName) else { throw Refusal.noQuery(queryName, schema: schemaName) }
        let sandbox = try configuredSandbox()
        var parameters = query.parameters
        parameters["query.queryName"] = [table.name]
        let scope = SandboxedQueries.Scope.study(key: study.key, caller: caller)
        do {
            let request = try SelectRowsRequest(parameters: parameters, catalog: catalog)
            let translator = QueryTranslator(schemas: catalogs, defaultSchema: schemaName, maxRows: sandbox.maxRows)
            let result =
                query.countTotal
                ? try await sandbox.page(request.statement, translator: translator, scope: scope)
                : try await sandbox.run(translator.translate(request.statement), scope: scope, countTotal: false)
            return Answer(
                schemaName: schemaName, queryName: table.name, key: ResearcherSchemas.keyColumn(schema: schemaName, table: table),
                result: result)
        } catch {
            throw Refusal.invalid(LabKeyProblem(field: "query", message: error.message))
        }
    }

    package func execute(_ query: Execute, on study: StudyCatalog.Study, caller: UUID) async throws -> Answer {
        let catalogs = try await catalogs(of: study)
        let (schemaName, _) = try Self.schema(query.schemaName, in: catalogs)
        let sandbox = try configuredSandbox()
        do {
            var statement = try QueryParser.parse(query.sql)
            try Self.apply(query, to: &statement)
            let translation = try QueryTranslator(schemas: catalogs, defaultSchema: schemaName, maxRows: sandbox.maxRows).translate(statement)
            let result = try await sandbox.run(translation, scope: SandboxedQueries.Scope.study(key: study.key, caller: caller), countTotal: false)
            return Answer(schemaName: schemaName, queryName: "sql", key: nil, result: result)
        } catch {
            throw Refusal.invalid(LabKeyProblem(field: "sql", message: error.message))
        }
    }

    /// The study's catalogs by schema name.
    package func catalogs(of study: StudyCatalog.Study) async throws -> [String: QueryTranslator.Catalog] {
        ResearcherSchemas.catalogs(lists: try await lists.catalog(studyKey: study.key))
    }

    /// The schema a call names (in any case), by its canonical name.
    package static func schema(
        _ name: String?, in catalogs: [String: QueryTranslator.Catalog]
    ) throws(Refusal) -> (String, QueryTranslator.Catalog) {
        guard let name else { throw .invalid(required("schemaName")) }
        guard let canonical = ResearcherSchemas.names.first(where: { $0 == name.lowercased() }), let catalog = catalogs[canonical] else {
            throw .noSchema(name)
        }
        return (canonical, catalog)
    }

    package static func required(_ parameter: String) -> LabKeyProblem {
        LabKeyProblem(field: parameter, message: "No value was supplied for the required parameter '\(parameter)'")
    }

    private func configuredSandbox() throws(Refusal) -> any QuerySandbox {
        guard let sandbox else { throw Refusal.unavailable }
        return sandbox
    }

    /// `executeSql`'s own paging and sorting, applied on top of the query's: `maxRows` and
    /// `offset`, and `query.sort` when the query has no ORDER BY.
    /// Both counts are bounded where they are read (`QueryStatement.rowCounts`), the query's own
    /// too, so their sum cannot overflow.
    static func apply(_ query: Execute, to statement: inout QueryStatement) throws(QueryError) {
        if let maxRows = try QueryStatement.pagingCount(query.maxRows, for: "maxRows") {
            statement.limit = min(statement.limit ?? maxRows, maxRows)
        }
        if let offset = try QueryStatement.pagingCount(query.offset, for: "offset"), offset > 0 {
            statement.offset = (statement.offset ?? 0) + offset
        }
        if statement.orderBy.isEmpty, let sort = query.sort {
            statement.orderBy = sort.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                .map { term in
                    let descending = term.hasPrefix("-")
                    return QueryOrder(expression: .column(qualifier: nil, name: descending ? String(term.dropFirst()) : term), descending: descending)
                }
        }
    }
}
