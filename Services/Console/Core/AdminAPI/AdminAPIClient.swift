import AdminContracts
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceKit
import StudyModels

/// The console's only way to read or change anything: the services' admin APIs, called with the
/// signed-in admin's bearer token, so the rules, roles and audit stay where they are.
package struct AdminAPIClient: Sendable {
    let studyMetadataURL: URL
    let registrationURL: URL
    let responseURL: URL
    let http: ManagedHTTPClient
    /// Largest reply accepted (a study document, a version list).
    let maxReplyBytes: Int
    let timeout: TimeAmount
    /// The drafts read last, by revision (see `draft(_:revision:token:logger:)`).
    let drafts: DraftCache

    package init(
        studyMetadata: URL, registration: URL, response: URL, http: ManagedHTTPClient, maxReplyBytes: Int = 16 * 1024 * 1024,
        timeout: TimeAmount = .seconds(15), drafts: DraftCache = DraftCache()
    ) {
        self.drafts = drafts
        studyMetadataURL = studyMetadata
        registrationURL = registration
        responseURL = response
        self.http = http
        self.maxReplyBytes = maxReplyBytes
        self.timeout = timeout
    }

    package struct Reply: Sendable {
        package var status: Int
        package var headers: HTTPHeaders
        package var body: ByteBuffer
    }

    /// Where `service`'s admin API is.
    func baseURL(of service: ServiceName) -> URL {
        switch service {
        case .studyMetadata: studyMetadataURL
        case .registration: registrationURL
        case .response: responseURL
        }
    }

    /// One admin endpoint as it is defined (`AdminCalls`): its path filled in with `parameters`
    /// and `query` (empty values left out), its body written, its reply read as its type.
    package func call<Body, Answer>(
        _ endpoint: AdminEndpoint<Body, Answer>, _ parameters: [String: String] = [:], query: [(String, String)] = [], body: Body,
        token: String?, headers: [(String, String)] = [], forwardedFor: String? = nil, logger: Logger
    ) async throws(AdminAPIError) -> Answer {
        let reply = try await exchange(
            endpoint, parameters, query: query, body: body, token: token, headers: headers, forwardedFor: forwardedFor, logger: logger)
        do {
            return try Answer.fromWire(reply.body)
        } catch {
            logger.error("admin API reply did not decode", metadata: ["path": "\(endpoint.path)", "error": "\(error)"])
            throw AdminAPIError(
                status: reply.status, code: "unexpected_reply", message: "\(endpoint.service.rawValue) answered something unexpected")
        }
    }

    /// An endpoint that takes no body.
    package func call<Answer>(
        _ endpoint: AdminEndpoint<NoContent, Answer>, _ parameters: [String: String] = [:], query: [(String, String)] = [],
        token: String?, logger: Logger
    ) async throws(AdminAPIError) -> Answer {
        try await call(endpoint, parameters, query: query, body: NoContent(), token: token, logger: logger)
    }

    /// The reply as it came (status, headers, bytes), for a caller that reads a header (`ETag`)
    /// or parses the bytes within a budget of its own.
    package func exchange<Body, Answer>(
        _ endpoint: AdminEndpoint<Body, Answer>, _ parameters: [String: String] = [:], query: [(String, String)] = [], body: Body,
        token: String?, headers: [(String, String)] = [], forwardedFor: String? = nil, logger: Logger
    ) async throws(AdminAPIError) -> Reply {
        let bytes: [UInt8]
        do {
            bytes = try body.wireBytes()
        } catch {
            throw AdminAPIError(status: 400, code: "bad_request", message: "the request could not be written: \(error)")
        }
        return try await send(
            endpoint.method, try Self.path(endpoint, parameters, query: query), on: endpoint.service, token: token,
            body: Body.contentType == nil ? nil : bytes, contentType: Body.contentType ?? "application/json", headers: headers,
            forwardedFor: forwardedFor, logger: logger)
    }

    /// `endpoint`'s path with its parameters and query; a parameter left empty is a page asking
    /// for nothing, answered as the admin API would answer a path without it.
    package static func path(
        _ endpoint: some AdminEndpointDescription, _ parameters: [String: String], query: [(String, String)] = []
    ) throws(AdminAPIError) -> String {
        switch endpoint.path.filled(parameters) {
        case .success(let path): return path + queryString(query)
        case .failure(let missing): throw AdminAPIError(status: 404, code: "not_found", message: "no \(missing.name) was given")
        }
    }

    /// - Parameter forwardedFor: the browser's address chain, so study-metadata's per-address
    ///   sign-in limit counts browsers, not the console (it trusts the console as a proxy).
    package func send(
        _ method: HTTPMethod, _ path: String, on service: ServiceName = .studyMetadata, token: String?, body: [UInt8]? = nil,
        contentType: String = "application/json", headers extra: [(String, String)] = [], forwardedFor: String? = nil,
        logger: Logger
    ) async throws(AdminAPIError) -> Reply {
        var url = baseURL(of: service).absoluteString
        if url.hasSuffix("/") { url.removeLast() }
        var request = HTTPClientRequest(url: url + path)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let forwardedFor { request.headers.add(name: "X-Forwarded-For", value: forwardedFor) }
        for (name, value) in extra { request.headers.add(name: name, value: value) }
        if let requestID = logger[metadataKey: "request_id"] { request.headers.add(name: "X-Request-Id", value: "\(requestID)") }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let status: Int
        let reply: ByteBuffer
        let headers: HTTPHeaders
        do {
            (status, headers, reply) = try await StaleConnection.retrying(method) {
                let response = try await http.client().execute(request, timeout: timeout, logger: logger)
                return (Int(response.status.code), response.headers, try await response.body.collect(upTo: maxReplyBytes))
            }
        } catch {
            logger.warning("admin API call failed", metadata: ["peer": "\(service.rawValue)", "path": "\(path)", "error": "\(error)"])
            throw .unreachable(service.rawValue, error)
        }
        guard (200..<300).contains(status) else { throw Self.error(status: status, reply: reply, peer: service) }
        return Reply(status: status, headers: headers, body: reply)
    }

    /// A refusal as the admin API words it, or a plain one when its body is not the error envelope.
    static func error(status: Int, reply: ByteBuffer, peer: ServiceName) -> AdminAPIError {
        if let body = try? InternalCoding.decoder.decode(AdminAPIError.Body.self, from: Data(buffer: reply)) {
            return AdminAPIError(status: status, code: body.error.code, message: body.error.message, problems: body.error.problems ?? [])
        }
        return AdminAPIError(status: status, code: "unexpected_reply", message: "\(peer.rawValue) answered \(status)")
    }

    /// A path segment (a study or app id) escaped for a URL path, as the admin API's paths are.
    package static func segment(_ id: String) -> String { PathTemplate.escaped(id) }

    /// `?name=value&...`, empty values left out.
    package static func queryString(_ query: [(String, String)]) -> String {
        let kept = query.filter { !$0.1.isEmpty }
        guard !kept.isEmpty else { return "" }
        return "?" + kept.map { "\($0.0)=\(Self.query($0.1))" }.joined(separator: "&")
    }

    static func query(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }
}
