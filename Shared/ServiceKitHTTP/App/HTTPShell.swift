import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceKit
import ServiceLifecycle

/// The HTTP side every StudyStack process has, with or without a database of its own: the
/// middleware chain (request id, metrics, errors in the API family's format, the body limit, 405
/// with `Allow`), `/healthz`, `/readyz` and `/metrics`. A process mounts its routes on `router`,
/// then `application` records them and builds the server.
public struct HTTPShell {
    public let router: Router<ServiceRequestContext>
    let routeTable = MethodNotAllowedMiddleware.RouteTable()

    /// - Parameters:
    ///   - name: the process's name in `/healthz`.
    ///   - readiness: what `/readyz` reports (200 when ready, 503 otherwise).
    ///   - beforeScrape: refreshes gauges read at scrape time (the database pool's).
    ///   - responseHeaders: fields every response carries, error responses included (the
    ///     console's security headers).
    ///   - isStarted: whether the process's start-up work (a service's migrations) is done; until
    ///     it is, every request but `/healthz`, `/readyz` and `/metrics` is answered 503
    ///     (`StartupGateMiddleware`). A process without a database starts ready.
    public init(
        name: String, metrics: ServiceMetrics, maxBodySize: Int,
        errorFormat: @escaping @Sendable (_ path: String) -> ErrorFormat,
        readiness: @escaping @Sendable () async -> ReadinessReport,
        beforeScrape: @escaping @Sendable () async -> Void = {},
        responseHeaders: HTTPFields = [:],
        isStarted: @escaping @Sendable () -> Bool = { true }
    ) {
        router = Router(context: ServiceRequestContext.self)
        router.addMiddleware { [routeTable] in
            ResponseHeadersMiddleware(fields: responseHeaders)
            RequestIDMiddleware()
            MetricsMiddleware(metrics: metrics)
            ErrorMiddleware(format: errorFormat)
            StartupGateMiddleware(isStarted: isStarted)
            BodyLimitMiddleware(limit: maxBodySize)
            MethodNotAllowedMiddleware(table: routeTable)
        }
        router.get("/healthz") { _, _ in
            HealthReport(status: "ok", service: name)
        }
        router.get("/readyz") { _, _ -> EditedResponse<ReadinessReport> in
            let report = await readiness()
            return EditedResponse(status: report.ready ? .ok : .serviceUnavailable, response: report)
        }
        router.get("/metrics") { _, _ -> Response in
            await beforeScrape()
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }

    /// The server with everything mounted so far, and `services` run beside it (in order; they
    /// stop in reverse order, after the server).
    public func application(
        host: String, port: Int, services: [any Service], logger: Logger,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }, routeCatalog: RouteCatalog? = nil
    ) -> ServiceApplication {
        let mounted = router.routes.map { (method: $0.method.rawValue, path: $0.path.description) }
        routeTable.record(mounted)
        routeCatalog?.record(mounted.map { ($0.method, $0.path) })
        return Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            services: services,
            onServerRunning: onServerRunning,
            logger: logger)
    }
}

/// Adds fixed fields to every response (outermost, so error responses carry them too).
struct ResponseHeadersMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let fields: HTTPFields

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        for field in fields where response.headers[field.name] == nil { response.headers.append(field) }
        return response
    }
}
