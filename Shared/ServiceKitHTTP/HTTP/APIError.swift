import Foundation
import HTTPTypes
import Hummingbird
import ServiceKit

/// A domain error that an HTTP target knows how to answer: the service's one mapping from what
/// went wrong (said by its core, without status codes) to what the client is sent.
public protocol APIErrorConvertible: Error {
    var apiError: APIError { get }
}

/// An error a route throws to answer the client. The error middleware renders it in the
/// format of the API family the request belongs to, so no route writes an error body by hand.
public struct APIError: Error, Sendable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    /// Stable machine-readable code for the admin API (`invalid_request`, `not_found`, ...).
    public var code: String
    /// A sentence for a person; safe to show (never a database or stack detail).
    public var message: String
    /// The request field at fault, when one is (the LabKey envelope's `field`).
    public var field: String?
    /// Per-field problems, for the admin API's validation errors.
    public var problems: [AdminErrorBody.Problem]?
    /// The `status` header code of the StatusMessage format; derived from `status` when nil.
    public var statusMessageCode: StatusMessageCode?
    /// Extra response headers (for example `Retry-After`).
    public var headers: HTTPFields

    public init(
        _ status: HTTPResponse.Status, code: String, message: String, field: String? = nil,
        problems: [AdminErrorBody.Problem]? = nil, statusMessageCode: StatusMessageCode? = nil,
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.problems = problems
        self.statusMessageCode = statusMessageCode
        self.headers = headers
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    public static func badRequest(_ message: String, field: String? = nil) -> APIError {
        APIError(.badRequest, code: "invalid_request", message: message, field: field)
    }

    public static func invalid(_ message: String, problems: [AdminErrorBody.Problem]) -> APIError {
        APIError(.unprocessableContent, code: "validation_failed", message: message, problems: problems)
    }

    public static func unauthenticated(_ message: String) -> APIError {
        APIError(.unauthorized, code: "unauthenticated", message: message)
    }

    public static func forbidden(_ message: String) -> APIError {
        APIError(.forbidden, code: "forbidden", message: message)
    }

    public static func notFound(_ message: String) -> APIError {
        APIError(.notFound, code: "not_found", message: message)
    }

    /// 429 with `Retry-After: 60` (the rate limits count per minute).
    public static func tooManyRequests(_ message: String) -> APIError {
        APIError(.tooManyRequests, code: "rate_limited", message: message, headers: [.retryAfter: "60"])
    }

    public static func conflict(_ message: String) -> APIError {
        APIError(.conflict, code: "conflict", message: message)
    }

    public static func contentTooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, code: "body_too_large", message: "request body is larger than \(limit) bytes")
    }

    public static func internalError() -> APIError {
        APIError(.internalServerError, code: "internal_error", message: "internal server error")
    }

    public static func unavailable(_ message: String) -> APIError {
        APIError(.serviceUnavailable, code: "unavailable", message: message)
    }
}
