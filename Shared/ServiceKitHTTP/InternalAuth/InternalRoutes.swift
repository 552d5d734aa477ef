import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceKit

/// A call of an internal endpoint as its handler sees it: the body already read, decoded and
/// checked as the endpoint defines, and the caller one the endpoint allows.
public struct InternalRequest<Body: InternalPayload>: Sendable {
    public let body: Body
    public let request: Request
    public let context: ServiceRequestContext

    /// A path parameter the endpoint's template names, percent-decoded.
    public func parameter(_ name: String) throws -> String {
        try context.parameters.decoded(name)
    }

    public var logger: Logger { context.logger }
}

extension RouterGroup where Context == ServiceRequestContext {
    /// Mounts `endpoint` on this group (the services' `/internal` group): only its callers are let
    /// through (403 otherwise), its body is read up to its limit and decoded as its type (400 with
    /// its `malformedBody` otherwise), and the handler's reply is written as the endpoint defines,
    /// with the status it picks.
    @discardableResult
    public func on<Body, Reply>(
        _ endpoint: InternalEndpoint<Body, Reply>, use handler: @escaping @Sendable (InternalRequest<Body>) async throws -> Reply
    ) -> Self {
        let method = HTTPRequest.Method(endpoint.method.rawValue) ?? .get
        return on(RouterPath(endpoint.routePattern(under: InternalEndpoints.prefix)), method: method) { request, context in
            try context.requireCaller(oneOf: endpoint.callers, endpoint.purpose)
            let bytes = try await request.body.collect(upTo: endpoint.maxBody ?? context.maxUploadSize)
            let body: Body
            do {
                body = try Body.fromWire(bytes)
            } catch {
                throw APIError.badRequest(endpoint.malformedBody)
            }
            guard body.isWellFormed else { throw APIError.badRequest(endpoint.malformedBody) }
            let reply = try await handler(InternalRequest(body: body, request: request, context: context))
            var headers = HTTPFields()
            if let contentType = Reply.contentType { headers[.contentType] = contentType }
            return Response(
                status: HTTPResponse.Status(code: endpoint.status(reply)), headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: try reply.wireBytes())))
        }
    }
}
