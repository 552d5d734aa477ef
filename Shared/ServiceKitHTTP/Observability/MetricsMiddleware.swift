import Foundation
import Hummingbird
import ServiceKit

/// Records every request in the service's Prometheus registry. It sits outside the error
/// middleware, so it sees the status the client receives.
public struct MetricsMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let metrics: ServiceMetrics

    public init(metrics: ServiceMetrics) {
        self.metrics = metrics
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        // Unmatched paths share one label so scanners cannot grow the series without bound.
        let route = context.endpointPath ?? "unmatched"
        do {
            let response = try await next(request, context)
            metrics.recordRequest(
                method: request.method.rawValue, route: route, status: response.status.code,
                duration: ContinuousClock.now - start)
            logCompletion(request, context: context, status: response.status.code, start: start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.recordRequest(
                method: request.method.rawValue, route: route, status: status, duration: ContinuousClock.now - start)
            logCompletion(request, context: context, status: status, start: start)
            throw error
        }
    }

    /// One access-log line per request: `debug` normally, `warning` for server errors. A 503 is
    /// an answer (not ready yet, or overloaded), not a fault, so it stays at `debug`.
    private func logCompletion(_ request: Request, context: Context, status: Int, start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        context.logger.log(
            level: status >= 500 && status != 503 ? .warning : .debug, "request",
            metadata: [
                "method": .string(request.method.rawValue), "path": .string(request.uri.path),
                "status": .stringConvertible(status), "duration_ms": .string(String(format: "%.2f", milliseconds)),
            ])
    }
}
