import HTTPTypes
import Hummingbird
import Logging
import ServiceKit
import Synchronization

/// Gives every request an id: the caller's `X-Request-Id` when it is a sane token, otherwise a
/// new random one. The id is echoed on the response and put on every log line of the request.
public struct RequestIDMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    public static let header = HTTPField.Name("X-Request-Id")!

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let id = request.headers[Self.header].flatMap { Self.isAcceptable($0) ? $0 : nil } ?? Self.makeID()
        context.requestID = id
        context.logger[metadataKey: "request_id"] = .string(id)
        var response = try await next(request, context)
        response.headers[Self.header] = id
        return response
    }

    /// 1 to 128 characters of letters, digits, `-`, `_`, `.` and `:`; anything else could be
    /// used to forge log lines or headers, so it is replaced.
    static func isAcceptable(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte == 0x3A
            }
    }

    /// A random per-process prefix and a counter: unique across processes and restarts without
    /// reading the system's random source on every request (which cost a tenth of a request's
    /// CPU). A request id is a correlation handle, not a secret.
    static func makeID() -> String {
        let number = counter.add(1, ordering: .relaxed).newValue
        return "\(processPrefix)-\(String(number, radix: 36))"
    }

    private static let processPrefix = String(RequestSignature.makeNonce().prefix(12))
    private static let counter = Atomic<UInt64>(0)
}
