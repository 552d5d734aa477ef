/// A recursive-descent parser for the participant's LabKey SQL (the grammar `QuerySyntax`
/// describes). Anything outside it is a syntax error naming the token where parsing stopped, as
/// LabKey's parser reports (`Syntax error near 'never'`).
package struct QueryParser {
    package static let reserved: Set<String> = [
        "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "AS", "ON", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER",
        "CROSS", "UNION", "ALL", "DISTINCT", "ORDER", "BY", "GROUP", "HAVING", "LIMIT", "OFFSET", "ASC", "DESC", "IS",
        "NULL", "LIKE", "IN", "BETWEEN", "CASE", "WHEN", "THEN", "ELSE", "END", "TRUE", "FALSE",
    ]

    /// Deep nesting is refused rather than allowed to exhaust the stack.
    package static let maxDepth = 64

    private var tokens: [QueryLexer.Token]
    private var position = 0
    private var depth = 0

    package static func parse(_ sql: String) throws(QueryError) -> QueryStatement {
        var parser = QueryParser(tokens: try QueryLexer.tokens(sql))
        let statement = try parser.statement()
        if parser.current.isSymbol(";") { parser.position += 1 }
        guard parser.current.kind == .end else { throw parser.unexpected() }
        return statement
    }

    private init(tokens: [QueryLexer.Token]) { self.tokens = tokens }

    private var current: QueryLexer.Token { tokens[position] }

    private func unexpected() -> QueryError { QueryError.syntax(near: current.text) }

    private mutating func accept(_ keyword: String) -> Bool {
        guard current.isKeyword(keyword) else { return false }
        position += 1
        return true
    }

    private mutating func acceptSymbol(_ symbol: String) -> Bool {
        guard current.isSymbol(symbol) else { return false }
        position += 1
        return true
    }

    private mutating func expect(_ keyword: String) throws(QueryError) {
        guard accept(keyword) else { throw unexpected() }
    }

    private mutating func expectSymbol(_ symbol: String) throws(QueryError) {
        guard acceptSymbol(symbol) else { throw unexpected() }
    }

    /// A name: an unreserved word or a double-quoted name.
    private mutating func name() throws(QueryError) -> String {
        switch current.kind {
        case .word(let word) where !Self.reserved.contains(word.uppercased()):
            position += 1
            return word
        case .quotedName(let name) where !name.isEmpty:
            position += 1
            return name
        default:
            throw unexpected()
        }
    }

    private var atName: Bool {
        switch current.kind {
        case .word(let word): !Self.reserved.contains(word.uppercased())
        case .quotedName(let name): !name.isEmpty
        default: false
        }
    }

    /// The count after LIMIT or OFFSET (`name`), within `QueryStatement.rowCounts`.
    private mutating func count(_ name: String) throws(QueryError) -> Int {
        guard case .number(let digits) = current.kind else { throw unexpected() }
        let value = try QueryStatement.rowCount(digits, for: name)
        position += 1
        return value
    }

    // MARK: Statements

    private mutating func statement() throws(QueryError) -> QueryStatement {
        var statement = QueryStatement(selects: [try select()])
        while accept("UNION") {
            statement.unionAll.append(accept("ALL"))
            statement.selects.append(try select())
        }
        if accept("ORDER") {
            try expect("BY")
            repeat {
                let expression = try expression()
                let descending = accept("DESC")
                if !descending { _ = accept("ASC") }
                statement.orderBy.append(QueryOrder(expression: expression, descending: descending))
            } while acceptSymbol(",")
        }
        if accept("LIMIT") { statement.limit = try count("LIMIT") }
        if accept("OFFSET") { statement.offset = try count("OFFSET") }
        return statement
    }

    private mutating func select() throws(QueryError) -> QuerySelect {
        try expect("SELECT")
        let distinct = accept("DISTINCT")
        if !distinct { _ = accept("ALL") }
        var items: [QuerySelectItem] = []
        repeat { items.append(try selectItem()) } while acceptSymbol(",")
        try expect("FROM")
        var select = QuerySelect(distinct: distinct, items: items, from: try tableReference())
        while true {
            if acceptSymbol(",") {
                select.joins.append(QueryJoin(kind: .cross, table: try tableReference(), condition: nil))
                continue
            }
            let kind: QueryJoin.Kind
            if accept("JOIN") {
                kind = .inner
            } else if accept("INNER") {
                try expect("JOIN")
                kind = .inner
            } else if accept("CROSS") {
                try expect("JOIN")
                kind = .cross
            } else if accept("LEFT") {
                kind = .left
                _ = accept("OUTER")
                try expect("JOIN")
            } else if accept("RIGHT") {
                kind = .right
                _ = accept("OUTER")
                try expect("JOIN")
            } else if accept("FULL") {
                kind = .full
                _ = accept("OUTER")
                try expect("JOIN")
            } else {
                break
            }
            let table = try tableReference()
            var condition: QueryExpression?
            if kind != .cross {
                try expect("ON")
                condition = try expression()
            }
            select.joins.append(QueryJoin(kind: kind, table: table, condition: condition))
        }
        if accept("WHERE") { select.filter = try expression() }
        if accept("GROUP") {
            try expect("BY")
            repeat { select.groupBy.append(try expression()) } while acceptSymbol(",")
        }
        if accept("HAVING") { select.having = try expression() }
        return select
    }

    private mutating func selectItem() throws(QueryError) -> QuerySelectItem {
        if acceptSymbol("*") { return .all(qualifier: nil) }
        if atName, tokens[position + 1].isSymbol("."), tokens[position + 2].isSymbol("*") {
            let qualifier = try name()
            position += 2
            return .all(qualifier: qualifier)
        }
        let expression = try expression()
        if accept("AS") { return .expression(expression, alias: try name()) }
        if atName { return .expression(expression, alias: try name()) }
        return .expression(expression, alias: nil)
    }

    private mutating func tableReference() throws(QueryError) -> QueryTableReference {
        var first = try name()
        var schema: String?
        if acceptSymbol(".") {
            schema = first
            first = try name()
            // `schema.table` is the deepest LabKey names go in a FROM clause.
            if current.isSymbol(".") { throw unexpected() }
        }
        var reference = QueryTableReference(schema: schema, name: first, alias: nil)
        if accept("AS") {
            reference.alias = try name()
        } else if atName {
            reference.alias = try name()
        }
        return reference
    }

    // MARK: Expressions, loosest binding first

    private mutating func expression() throws(QueryError) -> QueryExpression {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw QueryError("The SQL is nested too deeply.") }
        var left = try conjunction()
        while accept("OR") { left = .binary("OR", left, try conjunction()) }
        return left
    }

    private mutating func conjunction() throws(QueryError) -> QueryExpression {
        var left = try negation()
        while accept("AND") { left = .binary("AND", left, try negation()) }
        return left
    }

    private mutating func negation() throws(QueryError) -> QueryExpression {
        if accept("NOT") {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maxDepth else { throw QueryError("The SQL is nested too deeply.") }
            return .not(try negation())
        }
        return try predicate()
    }

    private mutating func predicate() throws(QueryError) -> QueryExpression {
        let left = try additive()
        for symbol in ["=", "<>", "<=", ">=", "<", ">"] where acceptSymbol(symbol) {
            return .binary(symbol, left, try additive())
        }
        if accept("IS") {
            let negated = accept("NOT")
            try expect("NULL")
            return .isNull(left, negated: negated)
        }
        let negated = accept("NOT")
        if accept("LIKE") { return .like(left, pattern: try additive(), negated: negated) }
        if accept("IN") {
            try expectSymbol("(")
            var values: [QueryExpression] = []
            repeat { values.append(try expression()) } while acceptSymbol(",")
            try expectSymbol(")")
            return .inList(left, values, negated: negated)
        }
        if accept("BETWEEN") {
            let low = try additive()
            try expect("AND")
            return .between(left, low, try additive(), negated: negated)
        }
        if negated { throw unexpected() }
        return left
    }

    private mutating func additive() throws(QueryError) -> QueryExpression {
        var left = try multiplicative()
        while true {
            guard let symbol = ["+", "-", "||"].first(where: { current.isSymbol($0) }) else { return left }
            position += 1
            left = .binary(symbol, left, try multiplicative())
        }
    }

    private mutating func multiplicative() throws(QueryError) -> QueryExpression {
        var left = try unary()
        while true {
            guard let symbol = ["*", "/", "%"].first(where: { current.isSymbol($0) }) else { return left }
            position += 1
            left = .binary(symbol, left, try unary())
        }
    }

    private mutating func unary() throws(QueryError) -> QueryExpression {
        if acceptSymbol("-") {
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maxDepth else { throw QueryError("The SQL is nested too deeply.") }
            return .negate(try unary())
        }
        if acceptSymbol("+") { return try unary() }
        return try primary()
    }

    private mutating func primary() throws(QueryError) -> QueryExpression {
        switch current.kind {
        case .string(let value):
            position += 1
            return .string(value)
        case .number(let digits):
            position += 1
            return .number(digits)
        case .symbol("("):
            position += 1
            let inner = try expression()
            try expectSymbol(")")
            return inner
        case .word(let word):
            switch word.uppercased() {
            case "NULL":
                position += 1
                return .null
            case "TRUE", "FALSE":
                position += 1
                return .boolean(word.uppercased() == "TRUE")
            case "CASE":
                position += 1
                return try caseExpression()
            default:
                if tokens[position + 1].isSymbol("(") { return try call(word) }
                return try column()
            }
        case .quotedName:
            return try column()
        default:
            throw unexpected()
        }
    }

    private mutating func column() throws(QueryError) -> QueryExpression {
        let first = try name()
        guard acceptSymbol(".") else { return .column(qualifier: nil, name: first) }
        return .column(qualifier: first, name: try name())
    }

    private mutating func call(_ word: String) throws(QueryError) -> QueryExpression {
        guard let function = QueryFunction(rawValue: word.lowercased()) else {
            throw QueryError("Function '\(word)' is not supported.")
        }
        position += 2
        if function == .count, acceptSymbol("*") {
            try expectSymbol(")")
            return .function(.count, distinct: false, arguments: [], star: true)
        }
        let distinct = function.isAggregate && accept("DISTINCT")
        var arguments: [QueryExpression] = []
        repeat { arguments.append(try expression()) } while acceptSymbol(",")
        try expectSymbol(")")
        guard function.arity.contains(arguments.count) else {
            throw QueryError("Function '\(word)' does not take \(arguments.count) argument(s).")
        }
        return .function(function, distinct: distinct, arguments: arguments, star: false)
    }

    private mutating func caseExpression() throws(QueryError) -> QueryExpression {
        var branches: [(QueryExpression, QueryExpression)] = []
        while accept("WHEN") {
            let condition = try expression()
            try expect("THEN")
            branches.append((condition, try expression()))
        }
        guard !branches.isEmpty else { throw unexpected() }
        let otherwise: QueryExpression? = accept("ELSE") ? try expression() : nil
        try expect("END")
        return .caseWhen(branches, otherwise: otherwise)
    }
}
