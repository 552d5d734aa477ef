import Foundation
import HTTPTypes
import Hummingbird
import ServiceKit
import StudyModels

/// One call to `/fdahpUserRegWS/<name>.api` as the apps send it: parameters in the query string
/// or in a JSON object body (iOS and Android differ; any order; the body wins), and the headers
/// `applicationId`, `orgId`, `auth`, `userId` and `language`.
struct UserRegCall: Sendable {
    let appId: String
    let orgId: String
    let parameters: [String: JSONValue]
    let headers: HTTPFields
    /// The TCP peer's address (a proxy's, behind one).
    let peerAddress: String?

    static let invalidInput = APIError(
        .badRequest, code: "invalid_request", message: "Invalid input.", statusMessageCode: .invalidInput)

    static func read(_ request: Request, context: ServiceRequestContext) async throws -> UserRegCall {
        func header(_ name: String) -> String? {
            request.headers[HTTPField.Name(name)!].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let appId = header("applicationId"), let orgId = header("orgId") else { throw invalidInput }
        var parameters: [String: JSONValue] = [:]
        for (name, value) in request.uri.formParameters {
            parameters[String(name)] = .string(String(value))
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        if body.readableBytes > 0 {
            // The apps send a JSON object; anything else is invalid input (never a 500).
            guard case .object(let fields) = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)) else {
                throw invalidInput
            }
            parameters.merge(fields) { _, body in body }
        }
        return UserRegCall(
            appId: appId, orgId: orgId, parameters: parameters, headers: request.headers,
            peerAddress: context.remoteAddress)
    }

    /// The client's address for rate limits: the peer, or behind a trusted proxy the address it
    /// forwarded for.
    func clientAddress(using resolver: ClientAddressResolver) -> String {
        resolver.resolve(peer: peerAddress, forwardedFor: header("X-Forwarded-For"))
    }

    func header(_ name: String) -> String? {
        headers[HTTPField.Name(name)!].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    func string(_ name: String) -> String? {
        parameters[name]?.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A password as typed: not trimmed (spaces are refused by the policy, not silently dropped).
    func secret(_ name: String) -> String? {
        guard case .string(let value)? = parameters[name], !value.isEmpty else { return nil }
        return value
    }

    func required(_ name: String) throws -> String {
        guard let value = string(name) else { throw Self.invalidInput }
        return value
    }

    func requiredSecret(_ name: String) throws -> String {
        guard let value = secret(name) else { throw Self.invalidInput }
        return value
    }

    func bool(_ name: String) -> Bool? {
        switch parameters[name] {
        case .bool(let value): value
        case .number(let value): value != 0
        case .string(let text): ["true", "1", "yes"].contains(text.lowercased()) ? true
            : ["false", "0", "no"].contains(text.lowercased()) ? false : nil
        default: nil
        }
    }

    func object(_ name: String) -> [String: JSONValue]? {
        if case .object(let value)? = parameters[name] { return value }
        return nil
    }

    func array(_ name: String) -> [JSONValue]? {
        if case .array(let value)? = parameters[name] { return value }
        return nil
    }
}

/// Errors of the registration API, with the messages the apps show (`StatusMessage`). 401 only
/// for an unknown or expired session (the apps then refresh), 403 for what refreshing cannot fix.
enum RegistrationError {
    static func invalid(_ message: String) -> APIError {
        APIError(.badRequest, code: "invalid_request", message: message, statusMessageCode: .invalidInput)
    }

    static let sessionExpired = APIError(
        .unauthorized, code: "unauthenticated", message: "Session expired.", statusMessageCode: .invalidAuthorization)
    static let wrongCredentials = APIError(
        .unauthorized, code: "unauthenticated", message: "Invalid username or password.",
        statusMessageCode: .invalidAuthorization)
    static func locked(minutes: Int) -> APIError {
        APIError(
            .unauthorized, code: "locked",
            message: "Your account is locked after too many failed sign-ins. Try again in \(minutes) minutes, or reset your password.",
            statusMessageCode: .invalidAuthorization)
    }
    static let notYourSession = APIError(
        .forbidden, code: "forbidden", message: "Your Session is Expired", statusMessageCode: .noData)
    static let codeExpired = APIError(.forbidden, code: "expired", message: "Code Expired", statusMessageCode: .noData)
    static let alreadyVerified = APIError(
        .forbidden, code: "conflict", message: "User already verified", statusMessageCode: .noData)
    static let notVerified = APIError(
        .forbidden, code: "not_verified", message: "Your email is not verified. Please verify your email.",
        statusMessageCode: .noData)
    static let invalidRefreshToken = APIError(
        .forbidden, code: "forbidden", message: "Invalid refresh token.", statusMessageCode: .noData)
    static let tooMany = APIError(
        .tooManyRequests, code: "rate_limited", message: "Too many requests. Please try again in a minute.",
        statusMessageCode: .invalidInput, headers: [.retryAfter: "60"])
}

extension RegistrationSuccess: ResponseEncodable {}
extension SessionReply: ResponseEncodable {}
extension VerifiedReply: ResponseEncodable {}
