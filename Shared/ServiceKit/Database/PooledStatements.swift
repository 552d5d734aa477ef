import Logging
import PostgresNIO

extension PostgresPreparedStatement {
    /// The statement as an unnamed one, with the same text and bindings: what runs behind a
    /// pooler in transaction mode, where a named statement lives on a server connection the next
    /// statement may not get (PgBouncer before 1.21 cannot carry it across).
    func unnamed() throws -> PostgresQuery {
        PostgresQuery(unsafeSQL: Self.sql, binds: try makeBindings())
    }
}

extension PostgresClient {
    /// Runs `statement` as a named prepared statement (parsed and planned once per connection),
    /// or unnamed behind a pooler in transaction mode.
    public func run<Statement: PostgresPreparedStatement>(
        _ statement: Statement, pooling: DatabaseSettings.Pooling, logger: Logger
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row> {
        switch pooling {
        case .session: try await execute(statement, logger: logger)
        case .transaction: try await query(try statement.unnamed(), logger: logger).map { try statement.decodeRow($0) }
        }
    }
}

extension PostgresConnection {
    /// `PostgresClient.run`, inside a transaction: the next transaction on this connection may
    /// reach another server connection through the pooler.
    public func run<Statement: PostgresPreparedStatement>(
        _ statement: Statement, pooling: DatabaseSettings.Pooling, logger: Logger
    ) async throws -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row> {
        switch pooling {
        case .session: try await execute(statement, logger: logger)
        case .transaction: try await query(try statement.unnamed(), logger: logger).map { try statement.decodeRow($0) }
        }
    }
}
