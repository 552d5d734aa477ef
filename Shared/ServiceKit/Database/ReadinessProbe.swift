import Logging
import PostgresNIO

/// Answers `/readyz`: the database answers within a short time and every migration of this
/// binary is recorded. Nothing is cached, so readiness follows the database both ways.
public struct ReadinessProbe: Sendable {
    let service: ServiceName
    let migrator: Migrator
    let timeout: Duration
    let startup: StartupState?
    let logger: Logger

    public init(
        service: ServiceName, migrator: Migrator, startup: StartupState? = nil, timeout: Duration = .seconds(2),
        logger: Logger
    ) {
        self.service = service
        self.migrator = migrator
        self.startup = startup
        self.timeout = timeout
        self.logger = logger
    }

    public func check() async -> ReadinessReport {
        if let startup, !startup.isFinished {
            return ReadinessReport(ready: false, service: service.rawValue, reason: "starting up: applying migrations")
        }
        do {
            let pending = try await withDeadline(timeout) { try await migrator.pending() }
            guard pending.isEmpty else {
                return ReadinessReport(
                    ready: false, service: service.rawValue, reason: "migrations pending",
                    pendingMigrations: pending.map(\.label))
            }
            return ReadinessReport(ready: true, service: service.rawValue)
        } catch is DeadlineExceeded {
            return ReadinessReport(
                ready: false, service: service.rawValue, reason: "database did not answer within \(timeout)")
        } catch {
            logger.warning("readiness check failed", metadata: ["error": "\(String(reflecting: error))"])
            return ReadinessReport(ready: false, service: service.rawValue, reason: "database unreachable")
        }
    }
}
