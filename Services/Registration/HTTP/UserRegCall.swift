import Foundation
import HTTPTypes
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// One call to `/fdahpUserRegWS/<name>.api` as the apps send it: parameters in the legacy
/// envelope (`LegacyEnvelope`: the query string or a JSON object body), and the headers
/// `applicationId`, `orgId`, `auth`, `userId` and `language`.
package struct UserRegCall: Sendable {
    package let appId: String
    package let orgId: String
    package let parameters: JSONObject
    package let headers: HTTPFields
    /// The TCP peer's address (a proxy's, behind one).
    package let peerAddress: String?

    package static let invalidInput = APIError(
        .badRequest, code: "invalid_request", message: "Invalid input.", statusMessageCode: .invalidInput)

    package static func read(_ request: Request, context: ServiceRequestContext) async throws -> UserRegCall {
        func header(_ name: String) -> String? {
            request.headers[HTTPField.Name(name)!].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let appId = header("applicationId"), let orgId = header("orgId") else { throw invalidInput }
        // The apps send a JSON object; anything else is invalid input (never a 500).
        let envelope = try await LegacyEnvelope.read(request, context: context, notAnObject: invalidInput)
        return UserRegCall(
            appId: appId, orgId: orgId, parameters: envelope.parameters, headers: request.headers,
            peerAddress: context.remoteAddress)
    }

    /// The client's address for rate limits: the peer, or behind a trusted proxy the address it
    /// forwarded for.
    package func clientAddress(using resolver: ClientAddressResolver) -> String {
        resolver.resolve(peer: peerAddress, forwardedFor: header("X-Forwarded-For"))
    }

    package func header(_ name: String) -> String? {
        headers[HTTPField.Name(name)!].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    package func string(_ name: String) -> String? {
        parameters[name]?.text.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A password as typed: not trimmed (spaces are refused by the policy, not silently dropped).
    package func secret(_ name: String) -> String? {
        guard case .string(let value)? = parameters[name], !value.isEmpty else { return nil }
        return value
    }

    package func required(_ name: String) throws -> String {
        guard let value = string(name) else { throw Self.invalidInput }
        return value
    }

    /// A parameter's text exactly as sent, not trimmed (nil when absent or only white space), for
    /// a rule that limits the length of what was sent (the core trims after counting).
    package func requiredAsSent(_ name: String) throws -> String {
        guard string(name) != nil, let value = parameters[name]?.text else { throw Self.invalidInput }
        return value
    }

    package func requiredSecret(_ name: String) throws -> String {
        guard let value = secret(name) else { throw Self.invalidInput }
        return value
    }

    package func bool(_ name: String) -> Bool? {
        switch parameters[name] {
        case .bool(let value): value
        case .number(let value): value.double != 0
        case .string(let text): ["true", "1", "yes"].contains(text.lowercased()) ? true
            : ["false", "0", "no"].contains(text.lowercased()) ? false : nil
        default: nil
        }
    }

    package func object(_ name: String) -> JSONObject? {
        if case .object(let value)? = parameters[name] { return value }
        return nil
    }

    package func array(_ name: String) -> [JSONValue]? {
        if case .array(let value)? = parameters[name] { return value }
        return nil
    }
}

extension RegistrationSuccess: ResponseEncodable {}
extension SessionReply: ResponseEncodable {}
extension VerifiedReply: ResponseEncodable {}
