import Logging
import PostgresNIO

/// Why migrations could not be applied.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// An applied migration's recorded checksum differs from the binary's: someone edited a
        /// migration that already ran. Fatal: the schema is no longer what the code expects.
        case checksumMismatch
        /// The binary's own list is inconsistent (duplicate or out-of-order versions).
        case invalidList
    }

    public let kind: Kind
    public let message: String

    public var description: String { message }
}

/// Applies migrations in order, each once, however many replicas start at the same time.
///
/// Every step takes the same transaction-scoped advisory lock, so concurrent runners queue;
/// after taking it a runner re-reads `schema_migrations`, and finds a migration another
/// replica applied meanwhile already recorded. Transaction-scoped locks are released by
/// COMMIT or ROLLBACK, so a runner that dies mid-way never leaves the lock held.
public struct Migrator: Sendable {
    /// Arbitrary constant naming StudyStack's migration lock ("STUDYMIG").
    static let advisoryLockKey: Int64 = 0x5354_5544_594D_4947

    public let client: PostgresClient
    public let migrations: [Migration]
    public let logger: Logger

    public init(client: PostgresClient, migrations: [Migration], logger: Logger) throws(MigrationError) {
        var nextVersion: [String: Int] = [:]
        for migration in migrations {
            let expected = nextVersion[migration.component, default: 1]
            guard migration.version == expected else {
                throw MigrationError(
                    kind: .invalidList,
                    message: "migration \(migration.label) is out of order: expected version \(expected) of \(migration.component)")
            }
            nextVersion[migration.component] = expected + 1
        }
        self.client = client
        self.migrations = migrations
        self.logger = logger
    }

    /// Applies what is pending; returns the migrations this call applied.
    @discardableResult
    public func migrate() async throws -> [Migration] {
        try await unwrappingTransactionErrors {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        component text NOT NULL,
                        version integer NOT NULL,
                        name text NOT NULL,
                        checksum text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now(),
                        PRIMARY KEY (component, version)
                    )
                    """,
                    logger: logger)
            }
        }
        var applied: [Migration] = []
        for migration in migrations {
            if try await apply(migration) { applied.append(migration) }
        }
        return applied
    }

    /// Applies one migration unless it is recorded; true when this call applied it.
    private func apply(_ migration: Migration) async throws -> Bool {
        try await unwrappingTransactionErrors {
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger)
                let rows = try await connection.query(
                    "SELECT checksum FROM schema_migrations WHERE component = \(migration.component) AND version = \(migration.version)",
                    logger: logger)
                for try await recorded in rows.decode(String.self) {
                    guard recorded == migration.checksum else {
                        throw MigrationError(
                            kind: .checksumMismatch,
                            message: "migration \(migration.label) was changed after it was applied "
                                + "(recorded checksum \(recorded.prefix(12))…, binary has \(migration.checksum.prefix(12))…); "
                                + "applied migrations are immutable: restore it and add a new migration instead")
                    }
                    return false
                }
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO schema_migrations (component, version, name, checksum)
                    VALUES (\(migration.component), \(migration.version), \(migration.name), \(migration.checksum))
                    """,
                    logger: logger)
                logger.info("applied migration", metadata: ["migration": "\(migration.label)"])
                return true
            }
        }
    }

    /// Migrations of this binary the database has not recorded with the same checksum.
    public func pending() async throws -> [Migration] {
        var recorded: [String: String] = [:]
        do {
            let rows = try await client.query(
                "SELECT component, version, checksum FROM schema_migrations", logger: logger)
            for try await (component, version, checksum) in rows.decode((String, Int, String).self) {
                recorded["\(component)/\(version)"] = checksum
            }
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" {
            // undefined_table: nothing has been applied yet.
            return migrations
        }
        return migrations.filter { recorded["\($0.component)/\($0.version)"] != $0.checksum }
    }

    /// postgres-nio wraps an error thrown inside `withTransaction`; callers want the original.
    private func unwrappingTransactionErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError { throw closureError }
            throw error
        }
    }
}
