/// A unit of work: what a use case writes together commits together or not at all.
///
/// `Work` is what the use case may do inside one, its stores bound to the transaction (for the
/// account rules, `AccountWork`). The use case holds a `Transactions` instead of a database
/// client, so the same rules run against PostgreSQL (`PostgresTransactions`, which opens a
/// database transaction) and, in the rule tests, against state kept in memory (which works on a
/// copy and keeps it only when the work returns).
public protocol Transactions<Work>: Sendable {
    associatedtype Work

    /// Runs `work` in one transaction: it commits when `work` returns and rolls back when `work`
    /// throws. What `work` throws (a refusal, say) reaches the caller as it was thrown.
    func run<Result: Sendable>(_ work: (Work) async throws -> Result) async throws -> Result
}
