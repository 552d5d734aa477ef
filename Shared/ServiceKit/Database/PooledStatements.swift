import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs `statement` as a named prepared statement (parsed and planned once per connection),
    /// or, behind a pooler in transaction mode, as an unnamed statement with the same text and
    /// bindings: there a prepared statement lives on a server connection the next statement may
    /// not get, and PgBouncer before 1.21 cannot carry it across.
    public func run<Statement: PostgresPreparedStatement>(
        _ statement: Statement, pooling: DatabaseSettings.Pooling, logger: Logger
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row> {
        switch pooling {
        case .session:
            return try await execute(statement, logger: logger)
        case .transaction:
            let rows = try await query(PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings()), logger: logger)
            return rows.map { try statement.decodeRow($0) }
        }
    }
}

extension PostgresConnection {
    /// `PostgresClient.run`, inside a transaction: the next transaction on this connection may
    /// reach another server connection through the pooler, where the statement was never prepared.
    public func run<Statement: PostgresPreparedStatement>(
        _ statement: Statement, pooling: DatabaseSettings.Pooling, logger: Logger
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row> {
        switch pooling {
        case .session:
            return try await execute(statement, logger: logger)
        case .transaction:
            let rows = try await query(PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings()), logger: logger)
            return rows.map { try statement.decodeRow($0) }
        }
    }
}
