import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Reads a study's response tables for its researchers' data grids: each table with its row count,
/// and a page of one table as `TableGridQuery` describes it.
///
/// Table and column names come from the study's catalog (never from the request) and are written
/// quoted; every value, the cursor's included, is bound.
package struct TableGridStore: Sendable {
    /// A table as the grid lists it.
    package struct TableSummary: Sendable {
        package var table: QueryTranslator.Catalog.Table
        package var children: [String]
        package var rows: Int64
        /// Counted, not estimated (`exactCountUpTo`).
        package var rowsExact: Bool
    }

    /// A page: each row a JSON array of the table's values in column order (PostgreSQL's own
    /// JSON for them), and the cursor of the next page when there is one.
    package struct Page: Sendable {
        package var rows: [String]
        package var next: TableGridQuery.Cursor?
    }

    package let client: PostgresClient
    package let logger: Logger
    /// Where a sort by a question asks for its index (none: every such sort reads the table).
    package let indexes: GridSortIndexes?

    package init(client: PostgresClient, indexes: GridSortIndexes? = nil, logger: Logger) {
        self.client = client
        self.indexes = indexes
        self.logger = logger
    }

    /// How many rows (as the statistics estimate them) one view of the tables counts exactly, all
    /// tables together, smallest first; the others' counts are the estimate the planner makes from
    /// their pages. Counting reads every row, and it runs on each view of the data page: a bound
    /// per table alone lets a study of many tables, or of one just under the bound, take tens of
    /// milliseconds a view.
    package static let exactCountBudget: Int64 = 50_000

    /// Every table of the study in creation order (parents before children), with row counts:
    /// exact for the smallest while their rows total at most `exactCountBudget`, estimated past it.
    package func tables(_ catalog: QueryTranslator.Catalog) async throws -> [TableSummary] {
        let tables = catalog.orderedTables
        guard !tables.isEmpty else { return [] }
        let names = tables.map { "\(SQLName.quoted(catalog.schema)).\(SQLName.quoted($0.sqlName))" }
        var estimates: [Int: Int64] = [:]
        for try await (index, estimate) in try await client.query(
            """
            SELECT t.i::int - 1, CASE WHEN c.relpages > 0
                THEN (c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int))::bigint
                ELSE greatest(c.reltuples, 0)::bigint END
            FROM unnest(\(names)::text[]) WITH ORDINALITY AS t(name, i) JOIN pg_class c ON c.oid = to_regclass(t.name)
            """, logger: logger
        ).decode((Int, Int64).self) { estimates[index] = estimate }
        var counted: [Int] = []
        var budget = Self.exactCountBudget
        for index in tables.indices.sorted(by: { (estimates[$0] ?? 0, $0) < (estimates[$1] ?? 0, $1) }) {
            let estimate = max(estimates[index] ?? 0, 0)
            guard estimate <= budget else { break }
            budget -= estimate
            counted.append(index)
        }
        var rows: [Int: Int64] = [:]
        if !counted.isEmpty {
            let counts = counted.map { index in "SELECT \(index), count(*) FROM \(names[index])" }
            for try await (index, count) in try await client.query(
                PostgresQuery(unsafeSQL: counts.joined(separator: " UNION ALL ")), logger: logger
            ).decode((Int, Int64).self) { rows[index] = count }
        }
        return tables.enumerated().map { index, table in
            TableSummary(
                table: table,
                children: tables.filter { $0.parent?.lowercased() == table.name.lowercased() }.map(\.name),
                rows: rows[index] ?? estimates[index] ?? 0, rowsExact: rows[index] != nil)
        }
    }

    /// One page of `table`.
    package func page(
        _ query: TableGridQuery, of table: QueryTranslator.Catalog.Table, in catalog: QueryTranslator.Catalog
    ) async throws -> Page {
        guard let sort = table.column(query.sort) else { return Page(rows: [], next: nil) }
        // What the page is ordered by (a text by its first characters), of a row named `alias`.
        func sortValue(_ alias: String) -> String {
            sort.storage == "VARCHAR"
                ? "pg_catalog.left(\(alias)\(SQLName.quoted(sort.sqlName)), \(TableGridQuery.textSortLength))"
                : alias + SQLName.quoted(sort.sqlName)
        }
        let sortColumn = sortValue("t.")
        if sort.name != "Key" {
            indexes?.want(.init(schema: catalog.schema, table: table.sqlName, expression: sortValue("")))
        }
        var binds = PostgresBindings()
        var conditions: [String] = []
        func bind(_ value: any PostgresNonThrowingEncodable & Sendable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        if let participant = query.participant {
            conditions.append("t.\"ParticipantId\" = \(bind(participant))")
        }
        if let from = query.from { conditions.append("t.\"Created\" >= \(bind(from))") }
        if let until = query.until { conditions.append("t.\"Created\" < \(bind(until))") }
        if let parentKey = query.parentKey, let parent = table.parent,
            let link = table.column(parent + "Id")
        {
            conditions.append("t.\(SQLName.quoted(link.sqlName)) = \(bind(parentKey))")
        }
        if let after = query.after {
            conditions.append(Self.continuation(after, column: sortColumn, type: Self.sqlType(sort.storage), bind: bind))
        }
        let direction = query.order == .asc ? "ASC NULLS LAST" : "DESC NULLS FIRST"
        let keyDirection = query.order == .asc ? "ASC" : "DESC"
        func ordering(value: String, key: String) -> String {
            sort.name == "Key" ? "\(key) \(keyDirection)" : "\(value) \(direction), \(key) \(keyDirection)"
        }
        let relation = "\(SQLName.quoted(catalog.schema)).\(SQLName.quoted(table.sqlName))"
        let values = table.columns.map { $0.jsonSQL(alias: "r") }
        // Two steps: the page's keys first, reading only the sort column (a sort with no index
        // reads every row), then those rows' values as JSON. Asked in one, PostgreSQL would write
        // every column of every row as JSON before sorting them: four times the work on a
        // 100,000-row table.
        let sql = """
            SELECT \(values.joined(separator: ", ")), page.sort::text, r."Key"
            FROM (
                SELECT t."Key" AS key, \(sortColumn) AS sort FROM \(relation) t
                \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
                ORDER BY \(ordering(value: sortColumn, key: "t.\"Key\"")) LIMIT \(query.limit + 1)
            ) page
            JOIN \(relation) r ON r."Key" = page.key
            ORDER BY \(ordering(value: "page.sort", key: "page.key"))
            """
        var rows: [String] = []
        var last: (value: String?, key: Int64)?
        for try await row in try await client.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger) {
            if rows.count == query.limit {
                let next = last.map { TableGridQuery.Cursor(column: sort.name, order: query.order, value: $0.value, key: $0.key) }
                return Page(rows: rows, next: next)
            }
            var cells: [String] = []
            cells.reserveCapacity(table.columns.count)
            var iterator = row.makeIterator()
            for _ in table.columns { cells.append(try iterator.next()?.decode(String?.self) ?? "null") }
            let sortValue = try iterator.next()?.decode(String?.self)
            let key = try iterator.next()?.decode(Int64.self) ?? 0
            rows.append("[" + cells.joined(separator: ",") + "]")
            last = (sortValue, key)
        }
        return Page(rows: rows, next: nil)
    }

    /// The rows after the cursor in the page's order: ascending puts missing values last,
    /// descending first (PostgreSQL's defaults), and the key breaks ties the same way.
    private static func continuation(
        _ cursor: TableGridQuery.Cursor, column: String, type: String,
        bind: (any PostgresNonThrowingEncodable & Sendable) -> String
    ) -> String {
        let key = bind(cursor.key)
        if cursor.column == "Key" {
            return cursor.order == .asc ? "t.\"Key\" > \(key)" : "t.\"Key\" < \(key)"
        }
        switch (cursor.order, cursor.value) {
        case (.asc, nil):
            return "(\(column) IS NULL AND t.\"Key\" > \(key))"
        case (.asc, let value?):
            let v = "\(bind(value))::text::\(type)"
            return "(\(column) > \(v) OR (\(column) = \(v) AND t.\"Key\" > \(key)) OR \(column) IS NULL)"
        case (.desc, nil):
            return "(\(column) IS NOT NULL OR t.\"Key\" < \(key))"
        case (.desc, let value?):
            let v = "\(bind(value))::text::\(type)"
            return "(\(column) < \(v) OR (\(column) = \(v) AND t.\"Key\" < \(key)))"
        }
    }

    static func sqlType(_ storage: String) -> String {
        switch storage {
        case "INTEGER": "bigint"
        case "DOUBLE": "double precision"
        case "TIMESTAMP": "timestamptz"
        case "BOOLEAN": "boolean"
        default: "text"
        }
    }
}
