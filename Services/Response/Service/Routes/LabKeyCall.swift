import Foundation
import HTTPTypes
import Hummingbird
import ServiceKit
import StudyModels

/// One call to `/mobileappstudy-<action>.api` or `/response-<action>.api` as the apps send it:
/// parameters from the query string or a JSON object body (iOS and Android differ), action names
/// in any case, and replies in LabKey's envelopes (`spec/response-server.md` 1).
struct LabKeyCall: Sendable {
    static let controllers = ["mobileappstudy-", "response-"]

    /// The action, lower-cased (`enroll`, `validateenrollmenttoken`, ...).
    let action: String
    let parameters: [String: JSONValue]
    let headers: HTTPFields

    /// The action a path segment names, or nil when it is not a LabKey API path.
    static func action(in segment: String) -> String? {
        let lower = segment.lowercased()
        guard lower.hasSuffix(".api") else { return nil }
        for controller in controllers where lower.hasPrefix(controller) {
            let action = lower.dropFirst(controller.count).dropLast(".api".count)
            return action.isEmpty ? nil : String(action)
        }
        return nil
    }

    static func isLabKeyPath(_ path: String) -> Bool {
        let segment = path.split(separator: "/").last.map(String.init) ?? ""
        return action(in: segment.split(separator: "?").first.map(String.init) ?? segment) != nil
    }

    static func read(_ request: Request, context: ServiceRequestContext, action: String) async throws -> LabKeyCall {
        var parameters: [String: JSONValue] = [:]
        for (name, value) in request.uri.queryParameters { parameters[String(name)] = .string(String(value)) }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        if body.readableBytes > 0 {
            guard case .object(let fields) = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)) else {
                throw APIError(.badRequest, code: "invalid_request", message: "The request body is not a JSON object.")
            }
            parameters.merge(fields) { _, body in body }
        }
        return LabKeyCall(action: action, parameters: parameters, headers: request.headers)
    }

    /// A parameter as text (numbers and booleans as the apps' JSON has them).
    func string(_ name: String) -> String? {
        parameters[name]?.text
    }

    /// The `language` parameter, or the header the 2021+ apps send.
    var language: String? {
        string("language") ?? headers[HTTPField.Name("language")!]
    }

    static let postRequired = APIError(
        .methodNotAllowed, code: "method_not_allowed", message: "You must use the POST method when calling this action.")

    /// A reply in the original's shape: pretty-printed JSON, `application/json; charset=utf-8`.
    static func reply(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// Validation failures as a 400 with every failure in `errors`, the first as `exception`.
    static func invalid(_ problems: [LabKeyProblem]) -> APIError {
        APIError(
            .badRequest, code: "invalid_request", message: problems.first?.message ?? "Invalid request",
            field: problems.first?.field, problems: problems.map { .init(pointer: $0.field, message: $0.message) })
    }
}
