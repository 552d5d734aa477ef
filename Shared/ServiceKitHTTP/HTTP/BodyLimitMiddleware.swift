import HTTPTypes
import Hummingbird
import NIOCore
import ServiceKit

/// Refuses bodies over the configured size with 413 before a route reads them, and tells the
/// context the limit so JSON decoding uses the same one.
public struct BodyLimitMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let limit: Int

    public init(limit: Int) {
        self.limit = limit
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.bodyLimit = limit
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
            throw APIError.contentTooLarge(limit: limit)
        }
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
