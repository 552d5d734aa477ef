import PostgresNIO

/// The one SQL shape of a leased claim, which every queue table and sweep that replicas share
/// builds its claim from: up to a limit of due rows, in order, taken with `FOR UPDATE SKIP
/// LOCKED` (rows another transaction holds are left to it), and each moved past a lease in the
/// same statement, so no replica takes it again until the lease ends and a worker that dies with
/// it only delays it.
///
/// ```sql
/// UPDATE <table> q SET <leaseColumn> = now() + <lease> [, <alsoSet>]
/// FROM (SELECT <key> FROM <table> WHERE <due> ORDER BY <order> LIMIT <limit> FOR UPDATE SKIP LOCKED) due
///      [, <joined table>]
/// WHERE q.<key> = due.<key> [AND <join condition>]
/// RETURNING <returning>
/// ```
///
/// Names and conditions are `StaticString`s: literals in the code, never text from outside; the
/// limit and the lease are bound.
public struct LeasedClaim: Sendable {
    // Kept as text, but only ever made from `StaticString`s (here and in `QueueTable`).
    let table: String
    /// The columns that name one row (`id`; `user_id`, `study_id`).
    let key: [String]
    /// The condition a row is due by, on the table's own columns.
    let due: String
    /// The order due rows are taken in.
    let order: String
    /// The column the lease moves: the row is due again at `now() + lease`.
    let leaseColumn: String
    /// More to set with the lease, on the claimed row `q` (`attempts = q.attempts + 1`).
    let alsoSet: String?

    public init(
        _ table: StaticString, key: [StaticString], due: StaticString, order: StaticString, leaseColumn: StaticString,
        alsoSet: StaticString? = nil
    ) {
        self.init(
            literals: "\(table)", key: key.map { "\($0)" }, due: "\(due)", order: "\(order)", leaseColumn: "\(leaseColumn)",
            alsoSet: alsoSet.map { "\($0)" })
    }

    /// From text joined out of `StaticString`s only (`QueueTable`'s names).
    init(literals table: String, key: [String], due: String, order: String, leaseColumn: String, alsoSet: String?) {
        self.table = table
        self.key = key
        self.due = due
        self.order = order
        self.leaseColumn = leaseColumn
        self.alsoSet = alsoSet
    }

    /// A table read alongside the claimed rows, joined on `condition` (the claimed row is `q`).
    public struct Join: Sendable {
        public let table: StaticString
        public let condition: StaticString

        public init(_ table: StaticString, on condition: StaticString) {
            self.table = table
            self.condition = condition
        }
    }

    /// The statement: claims up to `limit` due rows for `lease` and returns `columns` of each
    /// (the claimed row is `q`).
    public func query(returning columns: StaticString, joining join: Join? = nil, limit: Int, lease: Duration) -> PostgresQuery {
        query(returningLiterals: "\(columns)", joining: join, limit: limit, lease: lease)
    }

    func query(returningLiterals columns: String, joining join: Join?, limit: Int, lease: Duration) -> PostgresQuery {
        var sql = PostgresQuery.StringInterpolation(literalCapacity: 512, interpolationCount: 2)
        sql.appendLiteral("UPDATE \(table) q SET \(leaseColumn) = now() + make_interval(secs => ")
        sql.appendInterpolation(lease.inSeconds)
        sql.appendLiteral(")")
        if let alsoSet { sql.appendLiteral(", \(alsoSet)") }
        sql.appendLiteral("\nFROM (SELECT \(key.joined(separator: ", ")) FROM \(table) WHERE \(due) ORDER BY \(order) LIMIT ")
        sql.appendInterpolation(limit)
        sql.appendLiteral(" FOR UPDATE SKIP LOCKED) due")
        if let join { sql.appendLiteral(", \(join.table)") }
        sql.appendLiteral("\nWHERE " + key.map { "q.\($0) = due.\($0)" }.joined(separator: " AND "))
        if let join { sql.appendLiteral(" AND \(join.condition)") }
        sql.appendLiteral("\nRETURNING \(columns)")
        return PostgresQuery(stringInterpolation: sql)
    }
}
