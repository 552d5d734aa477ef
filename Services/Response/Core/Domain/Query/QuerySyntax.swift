import StudyModels

/// The part of LabKey SQL a participant may send (`SELECT` with joins, `UNION`, filters,
/// grouping, ordering and limits, and a short list of functions), as a tree. The translator
/// writes PostgreSQL from this tree alone, never from the participant's text.
package indirect enum QueryExpression: Equatable, Sendable {
    case column(qualifier: String?, name: String)
    case string(String)
    case number(String)
    case boolean(Bool)
    case null
    case negate(QueryExpression)
    case not(QueryExpression)
    /// `AND OR = <> < <= > >= + - * / % ||`
    case binary(String, QueryExpression, QueryExpression)
    case like(QueryExpression, pattern: QueryExpression, negated: Bool)
    case isNull(QueryExpression, negated: Bool)
    case inList(QueryExpression, [QueryExpression], negated: Bool)
    case between(QueryExpression, QueryExpression, QueryExpression, negated: Bool)
    /// A call of one of `QueryFunction`'s functions; `star` for `COUNT(*)`.
    case function(QueryFunction, distinct: Bool, arguments: [QueryExpression], star: Bool)
    case caseWhen([(QueryExpression, QueryExpression)], otherwise: QueryExpression?)

    package static func == (lhs: QueryExpression, rhs: QueryExpression) -> Bool {
        String(describing: lhs) == String(describing: rhs)
    }
}

/// The functions a participant query may call: aggregates and a few scalar functions, each
/// mapped to a `pg_catalog` function the translator names in full. No other function can be
/// written, so a query cannot call anything that changes settings, reads files or sleeps.
package enum QueryFunction: String, CaseIterable, Sendable {
    case count, sum, avg, min, max, lower, upper, length, abs, round, coalesce

    package var isAggregate: Bool { [.count, .sum, .avg, .min, .max].contains(self) }

    /// How many arguments the function takes.
    package var arity: ClosedRange<Int> {
        switch self {
        case .round: 1...2
        case .coalesce: 1...16
        default: 1...1
        }
    }
}

package struct QueryTableReference: Equatable, Sendable {
    /// The name as written, with a schema when one was given (`core.Users`).
    package var schema: String?
    package var name: String
    package var alias: String?
}

package struct QueryJoin: Equatable, Sendable {
    package enum Kind: String, Sendable {
        case inner = "JOIN", left = "LEFT JOIN", right = "RIGHT JOIN", full = "FULL JOIN", cross = "CROSS JOIN"
    }

    package var kind: Kind
    package var table: QueryTableReference
    package var condition: QueryExpression?
}

package enum QuerySelectItem: Equatable, Sendable {
    /// `*` or `alias.*`.
    case all(qualifier: String?)
    case expression(QueryExpression, alias: String?)
}

package struct QuerySelect: Equatable, Sendable {
    package var distinct = false
    package var items: [QuerySelectItem]
    package var from: QueryTableReference
    package var joins: [QueryJoin] = []
    package var filter: QueryExpression?
    package var groupBy: [QueryExpression] = []
    package var having: QueryExpression?
}

package struct QueryOrder: Equatable, Sendable {
    package var expression: QueryExpression
    package var descending: Bool

    package init(expression: QueryExpression, descending: Bool) {
        self.expression = expression
        self.descending = descending
    }
}

package struct QueryStatement: Equatable, Sendable {
    package var selects: [QuerySelect]
    /// For each select after the first: whether it is joined by `UNION ALL` (else `UNION`).
    package var unionAll: [Bool] = []
    package var orderBy: [QueryOrder] = []
    package var limit: Int?
    package var offset: Int?

    /// What LIMIT and OFFSET may say, in the SQL or as `maxRows` and `offset`: no study's table
    /// holds a billion rows, so a larger number comes from outside, and bounding it where it is
    /// read keeps the sum of the two offsets (`executeSql`'s on the query's) from overflowing.
    package static let rowCounts = 0...1_000_000_000

    /// A LIMIT or OFFSET count read from outside, or the error that names it.
    package static func rowCount(_ text: String, for name: String) throws(QueryError) -> Int {
        guard let value = WholeNumber.parse(text, in: rowCounts) else { throw QueryError.outOfRange(name) }
        return value
    }
}

extension QueryStatement {
    /// `maxRows` or `offset` as a LabKey call gives it: nil when absent, empty or negative (LabKey's
    /// `maxRows=-1` asks for every row, which the service's own cap then bounds); else a count
    /// within `rowCounts`.
    package static func pagingCount(_ text: String?, for name: String) throws(QueryError) -> Int? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        let bytes = text.utf8
        if bytes.count > 1, bytes.first == UInt8(ascii: "-"), bytes.dropFirst().allSatisfy({ (0x30...0x39).contains($0) }) { return nil }
        return try rowCount(text, for: name)
    }
}

extension QueryError {
    /// A LIMIT, OFFSET, `maxRows` or `offset` outside `QueryStatement.rowCounts`.
    package static func outOfRange(_ name: String) -> QueryError {
        QueryError("\(name) must be a whole number from 0 to 1000000000")
    }
}
