import Logging
import PostgresNIO

/// Reading query results in tests so that a check cannot pass on rows that never came: take the
/// one row a query must return, or all of them to count first.
extension AsyncSequence {
    /// The only element; throws when there is none or more than one.
    public func single() async throws -> Element {
        var found: [Element] = []
        for try await element in self {
            found.append(element)
            guard found.count == 1 else { throw TestServerError(description: "more than one row where one was expected") }
        }
        guard let only = found.first else { throw TestServerError(description: "no row where one was expected") }
        return only
    }

    /// Every element, in order (count them before checking each).
    public func collect() async throws -> [Element] {
        var found: [Element] = []
        for try await element in self { found.append(element) }
        return found
    }
}

extension PostgresClient {
    /// The one integer `query` selects (`SELECT count(*) ...`, say); throws when it selects no
    /// row or several, so a count that never came cannot pass for zero.
    public func count(_ query: PostgresQuery) async throws -> Int {
        try await self.query(query, logger: Logger(label: "test")).decode(Int.self).single()
    }

    /// Rows of `rows`, a table with an optional `WHERE ...` written by the test itself (never
    /// input): `count(rowsOf: "sage_archives WHERE sealed")`.
    public func count(rowsOf rows: String) async throws -> Int {
        try await count(PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(rows)"))
    }
}
