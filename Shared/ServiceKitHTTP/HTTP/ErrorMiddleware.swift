import Foundation
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import ServiceKit

/// Turns every error a route or middleware throws into a response in the request's API format,
/// and logs unexpected ones at `error` level (Hummingbird alone logs them at `debug`).
public struct ErrorMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext

    let format: @Sendable (_ path: String) -> ErrorFormat

    public init(format: @escaping @Sendable (_ path: String) -> ErrorFormat) {
        self.format = format
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = Self.apiError(for: error, context: context)
            return apiError.response(format: format(request.uri.path))
        }
    }

    /// Maps any error to what the client may see.
    static func apiError(for error: any Error, context: Context) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as any APIErrorConvertible:
            return error.apiError
        case let error where PostgresErrors.isUnavailable(error):
            // The database is away (restarting, failing over, its pooler reconnecting): 503 with
            // Retry-After tells clients and proxies to come back, where a 500 says the service is
            // broken. /readyz says 503 at the same time, so an orchestrator stops routing here.
            context.logger.warning("database unavailable", metadata: ["error": "\(String(reflecting: error))"])
            return APIError(
                .serviceUnavailable, code: "unavailable", message: "The service's database is unavailable. Try again shortly.",
                headers: [.retryAfter: "1"])
        case let error as IntakeLimit.Busy:
            // 503 with Retry-After: the clients that send heavy intakes (Sage's upload manager)
            // retry it, where a 4xx would make them drop what they hold.
            return APIError(.serviceUnavailable, code: "busy", message: error.description, headers: [.retryAfter: "5"])
        case let error as PostgresTransactionError:
            if let inner = error.closureError { return apiError(for: inner, context: context) }
            return unexpected(error, context: context)
        case let error as PSQLError where unstorableText.contains(error.serverInfo?[.sqlState] ?? ""):
            // PostgreSQL stores no NUL character in text or jsonb, so input holding one is refused
            // by the statement itself; it is the client's input, not a fault of the service.
            return APIError(
                .badRequest, code: "invalid_request", message: "Text cannot contain the NUL character (\\u0000).",
                statusMessageCode: .invalidInput)
        case let error as DecodingError:
            return JSONBody.apiError(for: error)
        case is NIOTooManyBytesError:
            return .contentTooLarge(limit: context.maxUploadSize)
        case let error as HTTPError:
            let message = error.body ?? error.status.reasonPhrase
            let code =
                switch error.status.code {
                case 404: "not_found"
                case 405: "method_not_allowed"
                case 413: "body_too_large"
                case 400..<500: "invalid_request"
                default: "internal_error"
                }
            if error.status.code >= 500 { return unexpected(error, context: context) }
            return APIError(error.status, code: code, message: message, headers: error.headers)
        default:
            return unexpected(error, context: context)
        }
    }

    /// `untranslatable_character` (a `\u0000` escape in jsonb) and `character_not_in_repertoire`
    /// (a NUL byte in text).
    static let unstorableText: Set<String> = ["22P05", "22021"]

    private static func unexpected(_ error: any Error, context: Context) -> APIError {
        context.logger.error("unhandled error", metadata: ["error": "\(String(reflecting: error))"])
        return .internalError()
    }
}
