/// `selectRows` parameters as a query statement: `queryName`
/// (or `query.queryName`), `query.columns`, `query.sort`, `query.<column>~<operator>` filters,
/// `query.maxRows` and `query.offset`. Unknown columns in `query.columns`, sorts and filters are
/// dropped silently, as LabKey drops them.
package struct SelectRowsRequest {
    package var queryName: String
    package var statement: QueryStatement

    /// Filter operators LabKey's URL filters use, by their URL names.
    package static let operators: [String: @Sendable (QueryExpression, String) -> QueryExpression] = [
        "eq": { .binary("=", $0, .string($1)) },
        "neq": { .binary("<>", $0, .string($1)) },
        "gt": { .binary(">", $0, .string($1)) },
        "gte": { .binary(">=", $0, .string($1)) },
        "lt": { .binary("<", $0, .string($1)) },
        "lte": { .binary("<=", $0, .string($1)) },
        "isblank": { column, _ in .isNull(column, negated: false) },
        "isnonblank": { column, _ in .isNull(column, negated: true) },
        "contains": { .like($0, pattern: .string("%" + escapeLike($1) + "%"), negated: false) },
        "doesnotcontain": { .like($0, pattern: .string("%" + escapeLike($1) + "%"), negated: true) },
        "startswith": { .like($0, pattern: .string(escapeLike($1) + "%"), negated: false) },
        "in": { .inList($0, $1.split(separator: ";").map { .string(String($0)) }, negated: false) },
        "notin": { .inList($0, $1.split(separator: ";").map { .string(String($0)) }, negated: true) },
    ]

    package static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }

    /// Nil `queryName` when the call names no query; throws when the query is not one of the
    /// study's lists.
    package init(parameters: [String: String], catalog: QueryTranslator.Catalog) throws(QueryError) {
        guard let name = parameters["queryName"] ?? parameters["query.queryName"],
            !name.trimmingCharacters(in: .whitespaces).isEmpty
        else { throw QueryError("No value was supplied for the required parameter 'queryName'") }
        guard let table = catalog.table(name) else { throw QueryError("Query '\(name)' doesn't exist") }
        queryName = name

        let requested = (parameters["query.columns"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.compactMap(table.column)
        let items: [QuerySelectItem] =
            requested.isEmpty
            ? [.all(qualifier: nil)] : requested.map { .expression(.column(qualifier: nil, name: $0.name), alias: nil) }

        var filters: [QueryExpression] = []
        for (key, value) in parameters.sorted(by: { $0.key < $1.key }) where key.hasPrefix("query.") {
            let field = key.dropFirst("query.".count)
            guard let tilde = field.firstIndex(of: "~"), let column = table.column(String(field[..<tilde])),
                let make = Self.operators[field[field.index(after: tilde)...].lowercased()]
            else { continue }
            filters.append(make(.column(qualifier: nil, name: column.name), value))
        }

        var orders: [QueryOrder] = []
        for term in (parameters["query.sort"] ?? "").split(separator: ",") {
            let trimmed = term.trimmingCharacters(in: .whitespaces)
            let descending = trimmed.hasPrefix("-")
            guard let column = table.column(descending ? String(trimmed.dropFirst()) : trimmed) else { continue }
            orders.append(QueryOrder(expression: .column(qualifier: nil, name: column.name), descending: descending))
        }

        statement = QueryStatement(
            selects: [
                QuerySelect(
                    items: items, from: QueryTableReference(schema: nil, name: table.name, alias: nil),
                    filter: filters.isEmpty ? nil : filters.dropFirst().reduce(filters[0]) { .binary("AND", $0, $1) })
            ],
            orderBy: orders,
            limit: (parameters["query.maxRows"] ?? parameters["maxRows"]).flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil },
            offset: (parameters["query.offset"] ?? parameters["offset"]).flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil })
    }
}
