import Foundation
import HTTPTypes
import Hummingbird
import ServiceKit
import StudyModels

/// One call to `/mobileappstudy-<action>.api` or `/response-<action>.api` as the apps send it:
/// parameters from the query string or a JSON object body (iOS and Android differ), action names
/// in any case, and replies in LabKey's envelopes (docs/response-api.md, App API).
struct LabKeyCall: Sendable {
    static let controllers = ["mobileappstudy-", "response-"]

    /// The action, lower-cased (`enroll`, `validateenrollmenttoken`, ...).
    let action: String
    /// Query parameters, and the body's members whose values are not objects or arrays.
    let parameters: [String: JSONValue]
    /// The body's object and array members as the JSON text they arrived as: a response's answers
    /// are passed on to PostgreSQL without being built here.
    let compound: [String: String]
    let headers: HTTPFields
    /// Where the call comes from, for per-client limits (see `ClientAddressResolver`).
    let clientAddress: String

    /// Every parameter name, simple or compound.
    var names: Set<String> { Set(parameters.keys).union(compound.keys) }

    /// A parameter as a JSON value (compound ones read on demand).
    func json(_ name: String) -> JSONValue? {
        if let raw = compound[name] { return try? JSONValue.parse(Array(raw.utf8)) }
        return parameters[name]
    }

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

    static func read(
        _ request: Request, context: ServiceRequestContext, action: String, addresses: ClientAddressResolver
    ) async throws -> LabKeyCall {
        var parameters: [String: JSONValue] = [:]
        var compound: [String: String] = [:]
        for (name, value) in request.uri.formParameters { parameters[String(name)] = .string(String(value)) }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        if body.readableBytes > 0 {
            let bytes = Array(body.readableBytesView)
            // The body wins over the query string.
            let read = bytes.withUnsafeBufferPointer { buffer -> [(String, JSONValue?, String?)]? in
                guard let members = try? JSONValue.members(ofObject: buffer) else { return nil }
                return members.map { member -> (String, JSONValue?, String?) in
                    let slice = UnsafeBufferPointer(rebasing: buffer[member.value])
                    if let first = slice.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
                        return (member.name, nil, String(decoding: slice, as: UTF8.self))
                    }
                    return (member.name, try? JSONValue.parse(slice), nil)
                }
            }
            guard let read else {
                throw APIError(.badRequest, code: "invalid_request", message: "The request body is not a JSON object.")
            }
            for (name, value, raw) in read {
                parameters[name] = value
                compound[name] = raw
            }
        }
        return LabKeyCall(
            action: action, parameters: parameters, compound: compound, headers: request.headers,
            clientAddress: addresses.resolve(request, context: context))
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
        .methodNotAllowed, code: "method_not_allowed", message: "You must use the POST method when calling this action.",
        headers: [.allow: "POST"])

    /// A reply in the original's shape: pretty-printed JSON, `application/json; charset=utf-8`.
    static func reply(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return reply(bytes: ByteBuffer(bytes: try encoder.encode(value)), status: status)
    }

    static func reply(bytes: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: bytes))
    }

    /// `{"success": true}` as `reply` writes it, encoded once: most calls answer just that.
    static let success: ByteBuffer = ByteBuffer(string: "{\n  \"success\" : true\n}")

    /// Validation failures as a 400 with every failure in `errors`, the first as `exception`.
    static func invalid(_ problems: [LabKeyProblem]) -> APIError {
        APIError(
            .badRequest, code: "invalid_request", message: problems.first?.message ?? "Invalid request",
            field: problems.first?.field, problems: problems.map { .init(pointer: $0.field, message: $0.message) })
    }
}
