import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import ServiceLifecycle
import Synchronization

/// The application type every StudyStack service builds.
public typealias ServiceApplication = Application<RouterResponder<ServiceRequestContext>>

/// Where a service mounts its routes.
public struct ServiceRoutes {
    /// The root router: the service's public API paths (mobile API, admin API).
    public let router: Router<ServiceRequestContext>
    /// `/internal`, behind signature verification.
    public let internalGroup: RouterGroup<ServiceRequestContext>
}

/// Builds a service with a database: PostgreSQL pool, migrations, the `HTTPShell` (middleware
/// chain, `/healthz`, `/readyz`, `/metrics`), the signed `/internal` group with `whoami`, and then
/// whatever the service adds.
///
/// - Parameters:
///   - errorFormat: which error format a request path uses (admin JSON by default).
///   - addRoutes: mounts the service's routes; returns extra background services (jobs).
///   - afterMigrations: start-up work that needs the schema, run once migrations are applied.
///   - onServerRunning: called once the server listens (tests read the bound port from it).
///   - routeCatalog: receives every route once they are all mounted (the OpenAPI coverage test).
public func buildServiceApplication(
    descriptor: ServiceDescriptor,
    settings: ServiceSettings,
    logger baseLogger: Logger,
    errorFormat: @escaping @Sendable (_ path: String) -> ErrorFormat = { _ in .admin },
    addRoutes: (ServiceRoutes, ServiceEnvironment) throws -> [any Service] = { _, _ in [] },
    afterMigrations: @escaping @Sendable (ServiceEnvironment) async throws -> Void = { _ in },
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
    routeCatalog: RouteCatalog? = nil
) throws -> ServiceApplication {
    var logger = baseLogger
    logger[metadataKey: "service"] = .string(descriptor.name.rawValue)

    // A unique application_name per process lets /metrics find this pool's connections.
    let applicationName = "\(descriptor.name.rawValue)-\(RequestSignature.makeNonce().prefix(12))"
    let postgres = PostgresClient(
        configuration: settings.database.clientConfiguration(applicationName: applicationName),
        backgroundLogger: logger)
    let migrator = try Migrator(client: postgres, migrations: descriptor.allMigrations, logger: logger)
    let startup = StartupState()
    let readiness = ReadinessProbe(service: descriptor.name, migrator: migrator, startup: startup, logger: logger)
    let nonces = NonceStore(client: postgres, logger: logger)
    let metrics = ServiceMetrics()
    metrics.watchQueue("internal_outbox", query: Outbox.table.depthQuery)
    let poolGauges = PoolGaugeReader(
        client: postgres, applicationName: applicationName, maxConnections: settings.database.maxConnections,
        metrics: metrics, logger: logger)
    let environment = ServiceEnvironment(
        descriptor: descriptor, settings: settings, postgres: postgres,
        internalClient: InternalClient(keys: settings.internalKeys, peers: settings.peers),
        metrics: metrics, audit: AuditLog(client: postgres, logger: logger),
        outbox: Outbox(client: postgres, logger: logger),
        rateLimiter: RateLimiter(
            client: postgres, perMinute: settings.rateLimitPerMinute, addresses: settings.clientAddresses, logger: logger),
        attempts: AttemptCounter(client: postgres, logger: logger),
        startup: startup,
        changes: ChangeListener(
            client: postgres, isReady: { startup.isFinished }, listens: settings.database.pooling == .session, metrics: metrics,
            logger: logger),
        logger: logger)

    let shell = HTTPShell(
        name: descriptor.name.rawValue, metrics: metrics, maxBodySize: settings.maxBodySize, errorFormat: errorFormat,
        readiness: { await readiness.check() }, beforeScrape: { await poolGauges.update() }, isStarted: { startup.isFinished })
    let router = shell.router

    let internalGroup = router.group("/internal")
        .add(middleware: InternalAuthMiddleware(keys: settings.internalKeys, nonces: nonces))
    internalGroup.on(InternalEndpoints.whoami(on: descriptor.name)) { call in
        guard let caller = call.context.internalCaller else { throw APIError.unauthenticated("not signed") }
        return WhoAmIResponse(service: descriptor.name.rawValue, caller: caller)
    }

    let serviceJobs = try addRoutes(ServiceRoutes(router: router, internalGroup: internalGroup), environment)

    let nonceCleanup = PeriodicJob(name: "nonce-cleanup", every: .seconds(60), logger: logger) {
        try await nonces.deleteExpired()
    }
    let counterCleanup = PeriodicJob(name: "rate-limit-cleanup", every: .seconds(60), logger: logger) {
        try await environment.rateLimiter.deleteOldWindows()
        try await environment.attempts.deleteStale()
    }
    // The pool comes first so that, shutting down in reverse order, it closes last.
    let services: [any Service] =
        [
            postgres,
            MigrationService(migrator: migrator, logger: logger, state: startup) { try await afterMigrations(environment) },
            nonceCleanup,
            counterCleanup,
            OutboxWorker(
                client: postgres, internalClient: environment.internalClient, metrics: metrics,
                wake: environment.changes.wakeSignal(channel: Outbox.channel), isReady: { startup.isFinished },
                logger: logger),
        ] + serviceJobs + [environment.changes]
    return shell.application(
        host: settings.host, port: settings.port, services: services, logger: logger, onServerRunning: onServerRunning,
        routeCatalog: routeCatalog)
}

/// The routes an application mounted, as `(method, path)` with Hummingbird's `:parameter`
/// syntax: what the documentation must describe.
public final class RouteCatalog: Sendable {
    private let entries = Mutex<[(method: String, path: String)]>([])

    public init() {}

    public var routes: [(method: String, path: String)] { entries.withLock { $0 } }

    func record(_ routes: [(String, String)]) {
        entries.withLock { $0 = routes.map { (method: $0.0, path: $0.1) } }
    }
}

/// Reply of `GET /healthz`.
public struct HealthReport: ResponseCodable, Sendable {
    public var status: String
    public var service: String
}

extension ReadinessReport: ResponseEncodable {}
extension WhoAmIResponse: ResponseEncodable {}
