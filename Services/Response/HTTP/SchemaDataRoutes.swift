import Foundation
import Hummingbird
import HummingbirdCore
import JSONText
import NIOCore
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /schema/{studyId}/data`: the URL a served schema protocol names as its `post_url`
/// (docs/schema-protocols.md, Receiving data). The app posts `multipart/form-data` from its
/// WebView; tools may post the same fields url-encoded or as a JSON object.
///
/// The app counts only a 200 as delivered and sends anything else again forever, so a stored or
/// replayed POST is 200 `true`; only what no retry can mend is 4xx, with the field at fault. Every
/// reply carries `Access-Control-Allow-Origin: *`: the WebView's request is cross-origin, and
/// without it the app would take a stored POST for a failure and send it again.
package struct SchemaDataRoutes {
    package let posts: SchemaPosts
    /// POSTs one client address may make per minute, counted in memory: a database write per
    /// POST would cost as much as storing it.
    package let limiter: LocalRateLimiter
    package let addresses: ClientAddressResolver

    /// A POST is a form of a few hundred bytes beside the answers; a long survey's answers are a
    /// few kilobytes.
    package static let maxBody = 256 * 1024

    package init(posts: SchemaPosts, limiter: LocalRateLimiter, addresses: ClientAddressResolver) {
        self.posts = posts
        self.limiter = limiter
        self.addresses = addresses
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/schema/:studyId/data", use: receive)
        router.on("/schema/:studyId/data", method: .options, use: preflight)
    }

    static let cors: HTTPFields = [
        .accessControlAllowOrigin: "*", .accessControlAllowMethods: "POST, OPTIONS",
        .accessControlAllowHeaders: "Content-Type", .accessControlMaxAge: "86400",
    ]

    @Sendable package func preflight(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        Response(status: .noContent, headers: Self.cors)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        guard limiter.allow(addresses.resolve(request, context: context)) else {
            return Self.reply(.tooManyRequests, "too_many_requests", "too many POSTs from this address; try again in a minute")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maxBody)
        } catch {
            return Self.reply(.contentTooLarge, "too_large", "the POST is over \(Self.maxBody / 1024) KiB")
        }
        let submission: SchemaSubmission
        do {
            submission = try SchemaSubmission.parse(try Self.fields(body, contentType: request.headers[.contentType] ?? ""))
        } catch {
            return Self.refusal(error)
        }
        switch try await posts.receive(submission, studyId: studyId) {
        case .stored:
            return Response(
                status: .ok, headers: Self.cors.merging([.contentType: "application/json"]), body: .init(byteBuffer: ByteBuffer(string: "true")))
        case .unknownStudy:
            return Self.reply(.notFound, "not_found", "no launched schema study \(studyId)")
        case .notCollecting:
            return Self.reply(.conflict, "not_collecting", "study \(studyId) is not collecting data now")
        case .refused(let problem):
            return Self.refusal(problem)
        }
    }

    /// The POST's fields, in order, by its content type.
    static func fields(_ body: ByteBuffer, contentType: String) throws(SchemaSubmission.Problem) -> [(name: String, value: String)] {
        let bytes = body.readableBytesView
        if let boundary = MultipartFormData.boundary(contentType: contentType) {
            let parts: [MultipartFormData.Part]
            do {
                parts = try MultipartFormData.parts(bytes, boundary: boundary, maxParts: SchemaSubmission.maxFields + 1)
            } catch .tooManyParts {
                throw SchemaSubmission.Problem(field: "", message: "at most \(SchemaSubmission.maxFields) fields are taken")
            } catch {
                throw SchemaSubmission.Problem(field: "", message: "the multipart/form-data body cannot be read: \(error)")
            }
            return try parts.map { part throws(SchemaSubmission.Problem) in
                guard part.filename == nil, let text = String(validating: part.content, as: UTF8.self) else {
                    throw SchemaSubmission.Problem(field: part.name, message: "\(part.name) must be text, not a file")
                }
                return (part.name, text)
            }
        }
        if contentType.lowercased().hasPrefix("application/json") {
            guard case .object(let members)? = try? JSONValue.parse(bytes, budget: .requestParameters(maxBytes: bytes.count)) else {
                throw SchemaSubmission.Problem(field: "", message: "the JSON body must be an object of the form's fields")
            }
            return members.sorted { $0.key < $1.key }.compactMap { name, value in
                value == .null ? nil : (name, value.text ?? value.serialized(sortedKeys: false))
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SchemaSubmission.Problem(field: "", message: "the form body is not UTF-8 text")
        }
        return URI.formPairs(text)
    }

    static func refusal(_ problem: SchemaSubmission.Problem) -> Response {
        reply(.unprocessableContent, "invalid_submission", problem.message, field: problem.field)
    }

    static func reply(_ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil) -> Response {
        var error: JSONObject = ["code": .string(code), "message": .string(message)]
        if let field, !field.isEmpty { error["field"] = .string(field) }
        return Response(
            status: status, headers: cors.merging([.contentType: "application/json"]),
            body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(["error": .object(error)]).serialized(sortedKeys: true))))
    }
}

extension HTTPFields {
    fileprivate func merging(_ other: HTTPFields) -> HTTPFields {
        var fields = self
        fields.append(contentsOf: other)
        return fields
    }
}
