/// The part of LabKey SQL a participant may send (`SELECT` with joins, `UNION`, filters,
/// grouping, ordering and limits, and a short list of functions), as a tree. The translator
/// writes PostgreSQL from this tree alone, never from the participant's text.
indirect enum QueryExpression: Equatable, Sendable {
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

    static func == (lhs: QueryExpression, rhs: QueryExpression) -> Bool {
        String(describing: lhs) == String(describing: rhs)
    }
}

/// The functions a participant query may call: aggregates and a few scalar functions, each
/// mapped to a `pg_catalog` function the translator names in full. No other function can be
/// written, so a query cannot call anything that changes settings, reads files or sleeps.
enum QueryFunction: String, CaseIterable, Sendable {
    case count, sum, avg, min, max, lower, upper, length, abs, round, coalesce

    var isAggregate: Bool { [.count, .sum, .avg, .min, .max].contains(self) }

    /// How many arguments the function takes.
    var arity: ClosedRange<Int> {
        switch self {
        case .round: 1...2
        case .coalesce: 1...16
        default: 1...1
        }
    }
}

struct QueryTableReference: Equatable, Sendable {
    /// The name as written, with a schema when one was given (`core.Users`).
    var schema: String?
    var name: String
    var alias: String?
}

struct QueryJoin: Equatable, Sendable {
    enum Kind: String, Sendable {
        case inner = "JOIN", left = "LEFT JOIN", right = "RIGHT JOIN", full = "FULL JOIN", cross = "CROSS JOIN"
    }

    var kind: Kind
    var table: QueryTableReference
    var condition: QueryExpression?
}

enum QuerySelectItem: Equatable, Sendable {
    /// `*` or `alias.*`.
    case all(qualifier: String?)
    case expression(QueryExpression, alias: String?)
}

struct QuerySelect: Equatable, Sendable {
    var distinct = false
    var items: [QuerySelectItem]
    var from: QueryTableReference
    var joins: [QueryJoin] = []
    var filter: QueryExpression?
    var groupBy: [QueryExpression] = []
    var having: QueryExpression?
}

struct QueryOrder: Equatable, Sendable {
    var expression: QueryExpression
    var descending: Bool
}

struct QueryStatement: Equatable, Sendable {
    var selects: [QuerySelect]
    /// For each select after the first: whether it is joined by `UNION ALL` (else `UNION`).
    var unionAll: [Bool] = []
    var orderBy: [QueryOrder] = []
    var limit: Int?
    var offset: Int?
}
