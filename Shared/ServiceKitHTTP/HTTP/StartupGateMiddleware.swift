import HTTPTypes
import Hummingbird

/// Answers 503 with `Retry-After` to every request but `/healthz`, `/readyz` and `/metrics` until
/// the service's migrations are applied. The server starts at once (so an orchestrator can ask
/// `/readyz`), but a load balancer without readiness probes (nginx's open-source upstreams), or a
/// peer calling in, may reach a replica that is still migrating: served then, a request would meet
/// a schema a migration behind the code and fail as a 500. Answered this way it is told to come
/// back, and clients that retry (the outbox, the apps, the peers' feeds) do.
public struct StartupGateMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let isStarted: @Sendable () -> Bool

    public init(isStarted: @escaping @Sendable () -> Bool) {
        self.isStarted = isStarted
    }

    /// What a starting replica still answers: whether it is alive, ready, and its metrics.
    static let alwaysServed: Set<String> = ["/healthz", "/readyz", "/metrics"]

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard isStarted() || Self.alwaysServed.contains(request.uri.path) else {
            throw APIError(
                .serviceUnavailable, code: "starting", message: "the service is starting: its database is being brought up to date",
                headers: [.retryAfter: "1"])
        }
        return try await next(request, context)
    }
}
