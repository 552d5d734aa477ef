import Foundation
import HTTPTypes
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// One call to `/mobileappstudy-<action>.api` or `/response-<action>.api` as the apps send it:
/// parameters in the legacy envelope (`LegacyEnvelope`: the query string or a JSON object body,
/// compound members kept as their text), action names
/// in any case, and replies in LabKey's envelopes (docs/response-api.md, App API).
package struct LabKeyCall: Sendable {
    package static let controllers = ["mobileappstudy-", "response-"]

    /// The action, lower-cased (`enroll`, `validateenrollmenttoken`, ...).
    package let action: String
    /// Query parameters, and the body's members whose values are not objects or arrays.
    package let parameters: JSONObject
    /// The body's object and array members as the JSON text they arrived as: a response's answers
    /// are passed on to PostgreSQL without being built here.
    package let compound: [String: String]
    package let headers: HTTPFields
    /// Where the call comes from, for per-client limits (see `ClientAddressResolver`).
    package let clientAddress: String

    /// Every parameter name, simple or compound.
    package var names: Set<String> { Set(parameters.keys).union(compound.keys) }

    /// A parameter as a JSON value (compound ones read on demand).
    package func json(_ name: String) -> JSONValue? {
        if let raw = compound[name] { return try? JSONValue.parse(Array(raw.utf8), budget: .responseAnswers) }
        return parameters[name]
    }

    /// The action a path segment names, or nil when it is not a LabKey API path.
    package static func action(in segment: String) -> String? {
        let lower = segment.lowercased()
        guard lower.hasSuffix(".api") else { return nil }
        for controller in controllers where lower.hasPrefix(controller) {
            let action = lower.dropFirst(controller.count).dropLast(".api".count)
            return action.isEmpty ? nil : String(action)
        }
        return nil
    }

    /// Whether errors on `path` answer in LabKey's envelope: the apps' calls, and the researchers'
    /// (`LabKeyResearcherRoutes`).
    package static func isLabKeyPath(_ path: String) -> Bool {
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let segment = last.split(separator: "?").first.map(String.init) ?? last
        return action(in: segment) != nil || LabKeyResearcherRoutes.isCall(segment)
    }

    package static func read(
        _ request: Request, context: ServiceRequestContext, action: String, addresses: ClientAddressResolver
    ) async throws -> LabKeyCall {
        let envelope = try await LegacyEnvelope.read(
            request, context: context, keepingCompoundText: true,
            notAnObject: APIError(.badRequest, code: "invalid_request", message: "The request body is not a JSON object."))
        return LabKeyCall(
            action: action, parameters: envelope.parameters, compound: envelope.compound, headers: request.headers,
            clientAddress: addresses.resolve(request, context: context))
    }

    /// A parameter as text (numbers and booleans as the apps' JSON has them).
    package func string(_ name: String) -> String? {
        parameters[name]?.text
    }

    /// The `language` parameter, or the header the 2021+ apps send.
    package var language: String? {
        string("language") ?? headers[.language]
    }

    package static let postRequired = APIError(
        .methodNotAllowed, code: "method_not_allowed", message: "You must use the POST method when calling this action.",
        headers: [.allow: "POST"])

    /// A reply in the original's shape: pretty-printed JSON, `application/json; charset=utf-8`.
    package static func reply(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return reply(bytes: ByteBuffer(bytes: try encoder.encode(value)), status: status)
    }

    package static func reply(bytes: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: bytes))
    }

    /// `{"success": true}` as `reply` writes it, encoded once: most calls answer just that.
    package static let success: ByteBuffer = ByteBuffer(string: "{\n  \"success\" : true\n}")

    /// Validation failures as a 400 with every failure in `errors`, the first as `exception`.
    package static func invalid(_ problems: [LabKeyProblem]) -> APIError {
        APIError(
            .badRequest, code: "invalid_request", message: problems.first?.message ?? "Invalid request",
            field: problems.first?.field, problems: problems.map { .init(pointer: $0.field, message: $0.message) })
    }
}

extension LabKeyRefusal: APIErrorConvertible {
    /// As the original answers a call it refuses: 400 with every problem in `errors`.
    package var apiError: APIError { LabKeyCall.invalid(problems) }
}
