import Logging
import PostgresNIO

/// Units of work as PostgreSQL transactions: `bind` makes the use case's `Work` (its stores on
/// the transaction's connection) for each one.
public struct PostgresTransactions<Work>: Transactions {
    private let client: PostgresClient
    private let logger: Logger
    private let bind: @Sendable (PostgresConnection) -> Work

    public init(client: PostgresClient, logger: Logger, bind: @escaping @Sendable (PostgresConnection) -> Work) {
        self.client = client
        self.logger = logger
        self.bind = bind
    }

    public func run<Result: Sendable>(_ work: (Work) async throws -> Result) async throws -> Result {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await work(bind(connection)) }
        } catch let failure as PostgresTransactionError {
            // The driver wraps what the work threw with the statements it tried; the work's own
            // error is the caller's answer (the transaction has rolled back, or its connection
            // is gone, either way nothing was kept). Failing to begin or commit stays the driver's.
            if let thrown = failure.closureError { throw thrown }
            throw failure
        }
    }
}
