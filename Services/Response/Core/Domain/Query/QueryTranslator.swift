import StudyModels
/// Writes PostgreSQL for a parsed participant query against one study's tables. Every table and
/// column must resolve to one of the study's lists (names matched in any case, as LabKey does) and
/// is written quoted and schema-qualified; literals are rewritten from their parsed values;
/// functions are named in `pg_catalog`. The participant's own text is never copied through.
///
/// This is the first of two locks: whatever the SQL says, PostgreSQL itself shows the reader role
/// only the participant's rows (`SandboxedQueries`).
package struct QueryTranslator {
    /// PostgreSQL for one query and the names its columns have in the reply.
    package struct Translation: Sendable, Equatable {
        package var sql: String
        package var columns: [String]
        /// Each column's storage when it is a list's column (`Catalog.Column.storage`); nil for
        /// computed ones, whose type the rows tell.
        package var storages: [String?]
        /// When the reply is cut at the translator's `maxRows` (the query asked for more, or for
        /// no limit): that many rows are kept, `sql` reads one more to know whether any was cut,
        /// and `countSQL` counts every row the query would give, for the reply to say so.
        package var cappedAt: Int?
        /// Every row the query would give, counted: present where the reply may be cut, and where
        /// the caller asked for the total (`translate(_:countTotal:)`).
        package var countSQL: String?
        /// The rows `sql` reads at most (its LIMIT) and how many it skips first (its OFFSET): a
        /// page that stops short of its limit after a row tells the total without `countSQL`.
        package var readLimit: Int?
        package var offset: Int

        package init(
            sql: String, columns: [String], storages: [String?]? = nil, cappedAt: Int? = nil, countSQL: String? = nil,
            readLimit: Int? = nil, offset: Int = 0
        ) {
            self.sql = sql
            self.columns = columns
            self.storages = storages ?? columns.map { _ in nil }
            self.cappedAt = cappedAt
            self.countSQL = countSQL
            self.readLimit = readLimit
            self.offset = offset
        }
    }

    /// The schema name LabKey shows the participant; any other schema is not found.
    package static let schemaName = "MobileAppResponse"

    /// How date answers read: always as the wall-clock time the participant saw (the instant at
    /// the offset kept beside it, `Catalog.Column.offsetSQLName`), so a date-only answer is
    /// midnight of its day wherever it was given, and filters and sorts compare what was answered.
    package enum DateStyle: Sendable, Equatable {
        /// The apps' reading: a `timestamp` the service writes in their format. Answers stored
        /// before offsets were kept read in `zone` (the configured query time zone).
        case participant(zone: String)
        /// Researchers': a selected date answer is text in LabKey's layout with its offset
        /// (`2017/02/13 00:00:00.000 -0500`); answers without an offset are at UTC.
        case researcher
    }

    /// The schemas a query may name, by lower-cased LabKey name.
    package let schemas: [String: Catalog]
    /// Where an unqualified table name is looked up (lower-cased).
    package let defaultSchema: String
    /// The most rows a reply carries, whatever the query's LIMIT.
    package let maxRows: Int
    package let dateStyle: DateStyle

    /// A participant's translator: the study's lists as the one schema, `MobileAppResponse`.
    package init(catalog: Catalog, maxRows: Int, zone: String = "UTC") {
        self.init(
            schemas: [Self.schemaName: catalog], defaultSchema: Self.schemaName, maxRows: maxRows,
            dateStyle: .participant(zone: zone))
    }

    /// A translator over several schemas (a researcher's `lists` and `mobileappstudy`).
    package init(schemas: [String: Catalog], defaultSchema: String, maxRows: Int, dateStyle: DateStyle = .researcher) {
        self.schemas = Dictionary(uniqueKeysWithValues: schemas.map { ($0.key.lowercased(), $0.value) })
        self.defaultSchema = defaultSchema.lowercased()
        self.maxRows = maxRows
        self.dateStyle = dateStyle
    }

    private struct Scope {
        package struct Entry {
            package var alias: String
            package var internalAlias: String
            package var table: Catalog.Table
        }

        package var entries: [Entry] = []
    }

    /// With `countTotal`, the translation also counts every row the query would give
    /// (`countSQL`), as a statement of its own rather than a window beside the rows: PostgreSQL 15
    /// costs `count(*) OVER ()` under a LIMIT as if the limit could stop it early, and so read
    /// whole tables backwards in key order where an index on the filter would read only the
    /// matching rows. Apart, the page takes the limit's shortcut and the count its narrowest index.
    package func translate(_ statement: QueryStatement, countTotal: Bool = false) throws(QueryError) -> Translation {
        var tableCounter = 0
        var outputs: [String] = []
        var storages: [String?] = []
        var parts: [String] = []
        var firstScope = Scope()
        for (index, select) in statement.selects.enumerated() {
            let (sql, names, types, scope) = try translate(select, tableCounter: &tableCounter)
            if index == 0 {
                outputs = names
                storages = types
                firstScope = scope
            } else {
                guard names.count == outputs.count else {
                    throw QueryError("Each part of a UNION must select the same number of columns.")
                }
                parts.append(statement.unionAll[index - 1] ? "UNION ALL" : "UNION")
            }
            parts.append(sql)
        }
        var sql = parts.joined(separator: " ")
        // The count reads the rows unsorted: a subquery with an ORDER BY is not merged into the
        // count, so every row would be sorted to be counted.
        let unsorted = sql
        if !statement.orderBy.isEmpty {
            var terms: [String] = []
            for order in statement.orderBy {
                let term: String
                if let output = outputIndex(order.expression, outputs: outputs) {
                    term = Self.quoted("c\(output + 1)")
                } else if statement.selects.count == 1 {
                    term = try expression(order.expression, scope: firstScope)
                } else {
                    throw QueryError("ORDER BY of a UNION must name one of its columns.")
                }
                terms.append(term + (order.descending ? " DESC" : " ASC"))
            }
            sql += " ORDER BY " + terms.joined(separator: ", ")
        }
        // Cut at `maxRows` where the query asks for more: one row more is read, so the reply can
        // say it was cut, and how many rows there were (`countSQL`).
        let capped = statement.limit.map { $0 > maxRows } ?? true
        let readLimit = capped ? (maxRows < Int.max ? maxRows + 1 : maxRows) : min(statement.limit ?? maxRows, maxRows)
        let offset = max(statement.offset ?? 0, 0)
        sql += " LIMIT \(readLimit)"
        if offset > 0 { sql += " OFFSET \(offset)" }
        return Translation(
            sql: sql, columns: Self.unique(outputs), storages: storages, cappedAt: capped ? maxRows : nil,
            countSQL: capped || countTotal ? "SELECT count(*) FROM (\(unsorted)) AS counted" : nil,
            readLimit: readLimit, offset: offset)
    }

    /// The output column an ORDER BY term names: a bare name or a position.
    private func outputIndex(_ expression: QueryExpression, outputs: [String]) -> Int? {
        switch expression {
        case .column(nil, let name):
            return outputs.firstIndex { $0.lowercased() == name.lowercased() }
        case .number(let digits):
            guard let position = Int(digits), (1...outputs.count).contains(position) else { return nil }
            return position - 1
        default:
            return nil
        }
    }

    private func translate(
        _ select: QuerySelect, tableCounter: inout Int
    ) throws(QueryError) -> (String, [String], [String?], Scope) {
        var scope = Scope()
        func add(_ reference: QueryTableReference) throws(QueryError) -> String {
            guard let catalog = schemas[(reference.schema ?? defaultSchema).lowercased()],
                let table = catalog.table(reference.name)
            else {
                throw QueryError.tableNotFound(
                    reference.schema.map { "\($0).\(reference.name)" } ?? reference.name)
            }
            let alias = reference.alias ?? table.name
            guard !scope.entries.contains(where: { $0.alias.lowercased() == alias.lowercased() }) else {
                throw QueryError("The table name or alias '\(alias)' is used twice.")
            }
            tableCounter += 1
            let internalAlias = "t\(tableCounter)"
            scope.entries.append(.init(alias: alias, internalAlias: internalAlias, table: table))
            return "\(Self.quoted(catalog.schema)).\(Self.quoted(table.sqlName)) AS \(Self.quoted(internalAlias))"
        }

        var from = try add(select.from)
        for join in select.joins {
            from += " \(join.kind.rawValue) " + (try add(join.table))
            if let condition = join.condition { from += " ON " + (try expression(condition, scope: scope)) }
        }

        var items: [String] = []
        var names: [String] = []
        var types: [String?] = []
        var expressionCount = 0
        // A selected date answer, as the style reads it (text with its offset for researchers,
        // but not where rows are grouped or made distinct: the offset would have to be grouped too).
        let formatsDates = dateStyle == .researcher && select.groupBy.isEmpty && !select.distinct
        func selected(_ entry: Scope.Entry, _ column: Catalog.Column) -> String {
            guard formatsDates, let offset = column.offsetSQLName else { return columnSQL(entry, column) }
            let minutes = "COALESCE(\(Self.quoted(entry.internalAlias)).\(Self.quoted(offset)), 0)"
            return "(pg_catalog.to_char(\(columnSQL(entry, column)), 'YYYY/MM/DD HH24:MI:SS.MS') || ' ' || "
                + Self.offsetText(minutes, colon: false) + ")"
        }
        for item in select.items {
            switch item {
            case .all(let qualifier):
                let entries = try qualifier.map { name throws(QueryError) in [try entry(name, scope: scope)] } ?? scope.entries
                for entry in entries {
                    for column in entry.table.columns {
                        items.append(selected(entry, column))
                        names.append(column.name)
                        types.append(column.storage)
                    }
                }
            case .expression(let value, let alias):
                if case .column(let qualifier, let name) = value {
                    let (entry, column) = try resolve(qualifier, name, scope: scope)
                    items.append(selected(entry, column))
                    names.append(alias ?? column.name)
                    types.append(column.storage)
                } else {
                    items.append(try expression(value, scope: scope))
                    if alias == nil { expressionCount += 1 }
                    names.append(alias ?? "EXPR\(expressionCount)")
                    types.append(nil)
                }
            }
        }
        let columns = items.enumerated().map { "\($1) AS \(Self.quoted("c\($0 + 1)"))" }
        var sql = "SELECT " + (select.distinct ? "DISTINCT " : "") + columns.joined(separator: ", ") + " FROM " + from
        if let filter = select.filter { sql += " WHERE " + (try expression(filter, scope: scope)) }
        if !select.groupBy.isEmpty {
            var terms: [String] = []
            for term in select.groupBy { terms.append(try expression(term, scope: scope)) }
            sql += " GROUP BY " + terms.joined(separator: ", ")
        }
        if let having = select.having { sql += " HAVING " + (try expression(having, scope: scope)) }
        return (sql, names, types, scope)
    }

    private func entry(_ alias: String, scope: Scope) throws(QueryError) -> Scope.Entry {
        guard let entry = scope.entries.first(where: { $0.alias.lowercased() == alias.lowercased() }) else {
            throw QueryError("Table '\(alias)' is not in the FROM clause.")
        }
        return entry
    }

    private func resolve(
        _ qualifier: String?, _ name: String, scope: Scope
    ) throws(QueryError) -> (entry: Scope.Entry, column: Catalog.Column) {
        if let qualifier {
            let entry = try entry(qualifier, scope: scope)
            guard let column = entry.table.column(name) else { throw QueryError("Column '\(qualifier).\(name)' not found.") }
            return (entry, column)
        }
        let matches = scope.entries.compactMap { entry in entry.table.column(name).map { (entry, $0) } }
        guard let match = matches.first else { throw QueryError("Column '\(name)' not found.") }
        guard matches.count == 1 else { throw QueryError("Column '\(name)' is ambiguous.") }
        return match
    }

    private func expression(_ expression: QueryExpression, scope: Scope) throws(QueryError) -> String {
        switch expression {
        case .column(let qualifier, let name):
            let (entry, column) = try resolve(qualifier, name, scope: scope)
            return columnSQL(entry, column)
        case .string(let value):
            return Self.literal(value)
        case .number(let digits):
            // Digits, one point and an exponent, as the lexer let through.
            return digits
        case .boolean(let value):
            return value ? "TRUE" : "FALSE"
        case .null:
            return "NULL"
        case .negate(let inner):
            return "(- " + (try self.expression(inner, scope: scope)) + ")"
        case .not(let inner):
            return "(NOT " + (try self.expression(inner, scope: scope)) + ")"
        case .binary(let symbol, let left, let right):
            return "(\(try self.expression(left, scope: scope)) \(symbol) \(try self.expression(right, scope: scope)))"
        case .like(let value, let pattern, let negated):
            return "(\(try self.expression(value, scope: scope)) \(negated ? "NOT LIKE" : "LIKE") \(try self.expression(pattern, scope: scope)))"
        case .isNull(let value, let negated):
            return "(\(try self.expression(value, scope: scope)) \(negated ? "IS NOT NULL" : "IS NULL"))"
        case .inList(let value, let list, let negated):
            var members: [String] = []
            for member in list { members.append(try self.expression(member, scope: scope)) }
            return "(\(try self.expression(value, scope: scope)) \(negated ? "NOT IN" : "IN") (\(members.joined(separator: ", "))))"
        case .between(let value, let low, let high, let negated):
            return "(\(try self.expression(value, scope: scope)) \(negated ? "NOT BETWEEN" : "BETWEEN") "
                + "\(try self.expression(low, scope: scope)) AND \(try self.expression(high, scope: scope)))"
        case .function(let function, let distinct, let arguments, let star):
            var written: [String] = []
            for argument in arguments { written.append(try self.expression(argument, scope: scope)) }
            return Self.call(function, distinct: distinct, arguments: written, star: star)
        case .caseWhen(let branches, let otherwise):
            var sql = "CASE"
            for (condition, value) in branches {
                sql += " WHEN \(try self.expression(condition, scope: scope)) THEN \(try self.expression(value, scope: scope))"
            }
            if let otherwise { sql += " ELSE " + (try self.expression(otherwise, scope: scope)) }
            return sql + " END"
        }
    }

    /// A column as the query reads it: a date answer as its wall-clock time (`DateStyle`).
    private func columnSQL(_ entry: Scope.Entry, _ column: Catalog.Column) -> String {
        let value = "\(Self.quoted(entry.internalAlias)).\(Self.quoted(column.sqlName))"
        guard let offset = column.offsetSQLName.map({ "\(Self.quoted(entry.internalAlias)).\(Self.quoted($0))" }) else {
            return value
        }
        switch dateStyle {
        case .participant(let zone):
            return "(CASE WHEN \(offset) IS NULL THEN \(value) AT TIME ZONE \(Self.literal(zone)) "
                + "ELSE \(value) AT TIME ZONE pg_catalog.make_interval(mins => \(offset)) END)"
        case .researcher:
            return "(\(value) AT TIME ZONE pg_catalog.make_interval(mins => COALESCE(\(offset), 0)))"
        }
    }

    /// An offset in minutes (SQL `minutes`) as text: `-0500`, or `-05:00` with `colon`.
    package static func offsetText(_ minutes: String, colon: Bool) -> String {
        "(CASE WHEN \(minutes) < 0 THEN '-' ELSE '+' END || "
            + "pg_catalog.lpad((pg_catalog.abs(\(minutes)) / 60)::pg_catalog.text, 2, '0') || '\(colon ? ":" : "")' || "
            + "pg_catalog.lpad((pg_catalog.abs(\(minutes)) % 60)::pg_catalog.text, 2, '0'))"
    }

    private static func call(_ function: QueryFunction, distinct: Bool, arguments: [String], star: Bool) -> String {
        let list = star ? "*" : (distinct ? "DISTINCT " : "") + arguments.joined(separator: ", ")
        switch function {
        case .coalesce:
            // COALESCE is syntax in PostgreSQL, not a function to look up.
            return "COALESCE(\(list))"
        case .round:
            // PostgreSQL rounds numerics; answers are stored as double precision.
            let digits = arguments.count > 1 ? ", (\(arguments[1]))::pg_catalog.int4" : ""
            return "pg_catalog.round((\(arguments[0]))::pg_catalog.numeric\(digits))"
        case .length:
            return "pg_catalog.length((\(arguments[0]))::pg_catalog.text)"
        default:
            return "pg_catalog.\(function.rawValue)(\(list))"
        }
    }

    /// A string literal for PostgreSQL with `standard_conforming_strings` on (the reader's
    /// transaction sets it): only the quote needs doubling; the lexer refused NUL.
    package static func literal(_ value: String) -> String {
        // By scalar: a quote followed by a combining mark is one Character that `'` does not match.
        "'" + value.replacingScalars(["'": "''", "\0": "\u{FFFD}"]) + "'"
    }

    package static func quoted(_ identifier: String) -> String { SQLName.quoted(identifier) }

    /// Reply names, each unique: a repeated name gets a number (`Key`, `Key1`), as LabKey does.
    package static func unique(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        return names.map { name in
            var candidate = name
            var suffix = 0
            while seen.contains(candidate.lowercased()) {
                suffix += 1
                candidate = "\(name)\(suffix)"
            }
            seen.insert(candidate.lowercased())
            return candidate
        }
    }
}
