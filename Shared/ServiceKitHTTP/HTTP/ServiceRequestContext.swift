import Foundation
import Hummingbird
import NIOCore
import ServiceKit

/// The per-request context of every StudyStack route: only facts about this request.
public struct ServiceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request's id (`X-Request-Id`), also on every log line as `request_id`.
    public var requestID: String = ""
    /// The service that signed this request, set by `InternalAuthMiddleware`.
    public var internalCaller: String?
    /// The largest body this request may carry; set by `BodyLimitMiddleware` from configuration.
    public var bodyLimit: Int = 8 * 1024 * 1024
    /// The client's address as seen by this process.
    public let remoteAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    public var maxUploadSize: Int { bodyLimit }

    /// Refuses (403) a signed internal call from any service not in `services` (an endpoint's
    /// callers, `RouterGroup.on`). `what` ends the message: "only study-metadata <what>".
    public func requireCaller(oneOf services: [ServiceName], _ what: String) throws {
        guard services.contains(where: { $0.rawValue == internalCaller }) else {
            throw APIError.forbidden("only \(services.map(\.rawValue).joined(separator: " and ")) \(what)")
        }
    }

    /// The internal API's form for every JSON reply: ISO 8601 dates, and `/` left unescaped so
    /// JSON Pointers and URLs read as written.
    public var responseEncoder: JSONEncoder { InternalCoding.encoder }
}
