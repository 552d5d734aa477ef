import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Whether the start-up work (migrations and what follows them) has finished in this process.
public final class StartupState: Sendable {
    private let finished = Atomic<Bool>(false)

    public init() {}

    public var isFinished: Bool { finished.load(ordering: .acquiring) }

    func markFinished() { finished.store(true, ordering: .releasing) }
}

/// Runs the migrations when the process starts, retrying while the database is unreachable.
///
/// The HTTP server starts at once and `/readyz` answers 503 until this has finished, so an
/// orchestrator holds traffic back; what reaches the server meanwhile is answered 503 too
/// (ServiceKitHTTP's `StartupGateMiddleware`). A changed migration is not retried: it stops the process.
public struct MigrationService: Service {
    let migrator: Migrator
    let logger: Logger
    /// Start-up work that needs the schema (for example creating the first admin); retried with
    /// the migrations while the database is unreachable.
    let afterMigrations: @Sendable () async throws -> Void
    let state: StartupState

    public init(
        migrator: Migrator, logger: Logger, state: StartupState = StartupState(),
        afterMigrations: @escaping @Sendable () async throws -> Void = {}
    ) {
        self.migrator = migrator
        self.logger = logger
        self.state = state
        self.afterMigrations = afterMigrations
    }

    public func run() async throws {
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let applied = try await migrator.migrate()
                logger.info("schema up to date", metadata: ["applied_now": "\(applied.count)"])
                try await afterMigrations()
                state.markFinished()
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
