import Foundation
import StudyModels

/// `selectRows` parameters as a query statement: `queryName`
/// (or `query.queryName`), `query.columns`, `query.sort`, `query.<column>~<operator>` filters,
/// `query.maxRows` and `query.offset`. Unknown columns in `query.columns`, sorts and filters are
/// dropped silently, as LabKey drops them.
package struct SelectRowsRequest {
    package var queryName: String
    package var statement: QueryStatement

    /// Filter operators LabKey's URL filters use, by their URL names (`query.<column>~<name>`):
    /// what the `labkey` client's `QueryFilter.Types` sends for the common cases. Multi-value
    /// operators take `;`-separated values (`between` a `,`-separated pair), as LabKey's do.
    package static let operators: [String: @Sendable (QueryExpression, String) throws(QueryError) -> QueryExpression] = [
        "eq": { .binary("=", $0, .string($1)) },
        "neq": { .binary("<>", $0, .string($1)) },
        "neqornull": { .binary("OR", .binary("<>", $0, .string($1)), .isNull($0, negated: false)) },
        "gt": { .binary(">", $0, .string($1)) },
        "gte": { .binary(">=", $0, .string($1)) },
        "lt": { .binary("<", $0, .string($1)) },
        "lte": { .binary("<=", $0, .string($1)) },
        "dateeq": { column, value throws(QueryError) in
            let (day, next) = try days(value)
            return .binary("AND", .binary(">=", column, .string(day)), .binary("<", column, .string(next)))
        },
        "dateneq": { column, value throws(QueryError) in
            let (day, next) = try days(value)
            return .binary("OR", .binary("<", column, .string(day)), .binary(">=", column, .string(next)))
        },
        "dategt": { column, value throws(QueryError) in .binary(">=", column, .string(try days(value).next)) },
        "dategte": { column, value throws(QueryError) in .binary(">=", column, .string(try days(value).day)) },
        "datelt": { column, value throws(QueryError) in .binary("<", column, .string(try days(value).day)) },
        "datelte": { column, value throws(QueryError) in .binary("<", column, .string(try days(value).next)) },
        "isblank": { column, _ in .isNull(column, negated: false) },
        "isnonblank": { column, _ in .isNull(column, negated: true) },
        "contains": { .like($0, pattern: .string("%" + escapeLike($1) + "%"), negated: false) },
        "doesnotcontain": { .like($0, pattern: .string("%" + escapeLike($1) + "%"), negated: true) },
        "startswith": { .like($0, pattern: .string(escapeLike($1) + "%"), negated: false) },
        "doesnotstartwith": { .like($0, pattern: .string(escapeLike($1) + "%"), negated: true) },
        "containsoneof": { column, value in
            anyOf(values(value).map { .like(column, pattern: .string("%" + escapeLike($0) + "%"), negated: false) })
        },
        "containsnoneof": { column, value in
            .not(anyOf(values(value).map { .like(column, pattern: .string("%" + escapeLike($0) + "%"), negated: false) }))
        },
        "in": { .inList($0, values($1).map { .string($0) }, negated: false) },
        "notin": { .inList($0, values($1).map { .string($0) }, negated: true) },
        "between": { column, value throws(QueryError) in
            let (low, high) = try pair(value)
            return .between(column, .string(low), .string(high), negated: false)
        },
        "notbetween": { column, value throws(QueryError) in
            let (low, high) = try pair(value)
            return .between(column, .string(low), .string(high), negated: true)
        },
    ]

    /// A multi-value filter's values: `;`-separated (a value list that is one empty string still
    /// names the empty string).
    static func values(_ text: String) -> [String] {
        text.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
    }

    static func anyOf(_ expressions: [QueryExpression]) -> QueryExpression {
        guard let first = expressions.first else { return .boolean(false) }
        return expressions.dropFirst().reduce(first) { .binary("OR", $0, $1) }
    }

    static func pair(_ text: String) throws(QueryError) -> (String, String) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw QueryError("A between filter takes two values separated by a comma, got '\(text)'.") }
        return (String(parts[0]).trimmingCharacters(in: .whitespaces), String(parts[1]).trimmingCharacters(in: .whitespaces))
    }

    /// The day a date filter names (`yyyy-MM-dd` or LabKey's `yyyy/MM/dd`, any time after it
    /// ignored) and the next one, as `yyyy-MM-dd`: a day is compared as the range between them.
    static func days(_ text: String) throws(QueryError) -> (day: String, next: String) {
        let digits = text.prefix(10).split(whereSeparator: { $0 == "-" || $0 == "/" }).map { Int($0) }
        guard digits.count == 3, let year = digits[0], let month = digits[1], let day = digits[2],
            (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { throw QueryError("'\(text)' is not a date (yyyy-MM-dd).") }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone.gmt
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
            calendar.component(.day, from: date) == day,
            let next = calendar.date(byAdding: .day, value: 1, to: date)
        else { throw QueryError("'\(text)' is not a date (yyyy-MM-dd).") }
        func format(_ date: Date) -> String {
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
        }
        return (format(date), format(next))
    }

    package static func escapeLike(_ text: String) -> String {
        text.replacingScalars(["\\": "\\\\", "%": "\\%", "_": "\\_"])
    }

    /// A participant's call: each parameter once.
    package init(parameters: [String: String], catalog: QueryTranslator.Catalog) throws(QueryError) {
        try self.init(parameters: parameters.mapValues { [$0] }, catalog: catalog)
    }

    /// Throws when the call names no query or one that is not in `catalog`, or when a filter's
    /// value does not suit its operator. A parameter may come more than once (the `labkey`
    /// client repeats a filter's name for each of its values); filters are all applied.
    package init(parameters: [String: [String]], catalog: QueryTranslator.Catalog) throws(QueryError) {
        func first(_ name: String) -> String? { parameters[name]?.first }
        guard let name = first("queryName") ?? first("query.queryName"),
            !name.trimmingCharacters(in: .whitespaces).isEmpty
        else { throw QueryError("No value was supplied for the required parameter 'queryName'") }
        guard let table = catalog.table(name) else { throw QueryError("Query '\(name)' doesn't exist") }
        queryName = name

        let requested = (parameters["query.columns"] ?? []).joined(separator: ",").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.compactMap(table.column)
        let items: [QuerySelectItem] =
            requested.isEmpty
            ? [.all(qualifier: nil)] : requested.map { .expression(.column(qualifier: nil, name: $0.name), alias: nil) }

        var filters: [QueryExpression] = []
        for (key, values) in parameters.sorted(by: { $0.key < $1.key }) where key.hasPrefix("query.") {
            let field = key.dropFirst("query.".count)
            guard let tilde = field.firstIndex(of: "~"), let column = table.column(String(field[..<tilde])) else { continue }
            let operation = field[field.index(after: tilde)...].lowercased()
            guard let make = Self.operators[operation] else {
                throw QueryError("The filter operator '\(operation)' is not supported here.")
            }
            for value in values { filters.append(try make(.column(qualifier: nil, name: column.name), value)) }
        }

        var orders: [QueryOrder] = []
        for term in (parameters["query.sort"] ?? parameters["sort"] ?? []).joined(separator: ",").split(separator: ",") {
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
            limit: try QueryStatement.pagingCount(first("query.maxRows") ?? first("maxRows"), for: "maxRows"),
            offset: try QueryStatement.pagingCount(first("query.offset") ?? first("offset"), for: "offset"))
    }
}
