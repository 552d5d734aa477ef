import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `body` in one read-only, repeatable-read transaction: every query in it sees the same
    /// snapshot (an export's tables agree with each other, a query's page with its count).
    ///
    /// Whatever ends `body` early (a query's error, a download the client cancelled and the
    /// chunk that could not be written) rolls the transaction back, so the connection returns to
    /// its pool outside any transaction; when even the rollback fails the connection is closed,
    /// and the pool opens another. A connection left in an aborted transaction would fail the
    /// next request or worker round that borrowed it.
    package func withReadOnlySnapshot<Result>(
        logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
        let result: Result
        do {
            result = try await body(self)
        } catch {
            do {
                try await query("ROLLBACK", logger: logger)
            } catch {
                logger.warning("rollback failed; closing the connection", metadata: ["error": "\(String(reflecting: error))"])
                try? await close()
            }
            throw error
        }
        try await query("COMMIT", logger: logger)
        return result
    }
}
