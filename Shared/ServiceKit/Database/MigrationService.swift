import Logging
import PostgresNIO
import ServiceLifecycle

/// Runs the migrations when the process starts, retrying while the database is unreachable.
///
/// The HTTP server starts at once and `/readyz` answers 503 until this has finished, so an
/// orchestrator holds traffic back. A changed migration is not retried: it stops the process.
public struct MigrationService: Service {
    let migrator: Migrator
    let logger: Logger

    public init(migrator: Migrator, logger: Logger) {
        self.migrator = migrator
        self.logger = logger
    }

    public func run() async throws {
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let applied = try await migrator.migrate()
                logger.info("schema up to date", metadata: ["applied_now": "\(applied.count)"])
                break
            } catch let error as MigrationError {
                logger.critical("\(error.message)")
                throw error
            } catch {
                logger.warning(
                    "could not apply migrations, retrying",
                    metadata: ["error": "\(String(reflecting: error))", "retry_in": "\(delay)"])
                let pause = delay
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
                delay = min(delay * 2, .seconds(15))
            }
        }
        // A service that returns would end the whole group; stay until shutdown.
        try? await gracefulShutdown()
    }
}
