import HTTPTypes
import Hummingbird
import NIOCore
import ServiceKit

/// Refuses bodies over the configured size with 413 before a route reads them, and tells the
/// context the limit so JSON decoding uses the same one. A large body is taken only while the
/// process's `BodyBudget` holds room for it (its declared length, or the limit when it is sent
/// chunked), until its request is answered; past that, 503 `busy` with `Retry-After` before any
/// of it is read.
public struct BodyLimitMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let limit: Int
    let budget: BodyBudget

    public init(limit: Int, budget: BodyBudget? = nil) {
        self.limit = limit
        self.budget = budget ?? BodyBudget(capacity: BodyBudget.capacity(maxBodySize: limit))
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.bodyLimit = limit
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let declared, declared > limit {
            throw APIError.contentTooLarge(limit: limit)
        }
        let counted = declared ?? (request.headers[.transferEncoding] != nil ? limit : 0)
        guard budget.take(counted) else {
            throw APIError(
                .serviceUnavailable, code: "busy",
                message: "The service is reading as many large request bodies as it holds at once. Try again shortly.",
                headers: [.retryAfter: "5"])
        }
        defer { budget.give(counted) }
        // A chunked body has no declared length; buffer it up to the limit so an oversized
        // one is refused here rather than half-way through a handler.
        var request = request
        if request.headers[.contentLength] == nil, request.headers[.transferEncoding] != nil {
            do {
                _ = try await request.collectBody(upTo: limit)
            } catch is NIOTooManyBytesError {
                throw APIError.contentTooLarge(limit: limit)
            }
        }
        return try await next(request, context)
    }
}
