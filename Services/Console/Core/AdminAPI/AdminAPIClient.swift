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
    package enum Peer: String, Sendable {
        case studyMetadata = "study-metadata"
        case registration
        case response
    }

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

    /// One call: a 2xx reply, or an `AdminAPIError`.
    ///
    /// Where `peer`'s admin API is.
    func baseURL(of peer: Peer) -> URL {
        switch peer {
        case .studyMetadata: studyMetadataURL
        case .registration: registrationURL
        case .response: responseURL
        }
    }

    /// - Parameter forwardedFor: the browser's address chain, so study-metadata's per-address
    ///   sign-in limit counts browsers, not the console (it trusts the console as a proxy).
    package func send(
        _ method: HTTPMethod, _ path: String, on peer: Peer = .studyMetadata, token: String?, body: [UInt8]? = nil,
        contentType: String = "application/json", headers extra: [(String, String)] = [], forwardedFor: String? = nil,
        logger: Logger
    ) async throws(AdminAPIError) -> Reply {
        var url = baseURL(of: peer).absoluteString
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
            logger.warning("admin API call failed", metadata: ["peer": "\(peer.rawValue)", "path": "\(path)", "error": "\(error)"])
            throw .unreachable(peer.rawValue, error)
        }
        guard (200..<300).contains(status) else { throw Self.error(status: status, reply: reply, peer: peer) }
        return Reply(status: status, headers: headers, body: reply)
    }

    /// A refusal as the admin API words it, or a plain one when its body is not the error envelope.
    static func error(status: Int, reply: ByteBuffer, peer: Peer) -> AdminAPIError {
        if let body = try? JSONDecoder().decode(AdminAPIError.Body.self, from: Data(buffer: reply)) {
            return AdminAPIError(status: status, code: body.error.code, message: body.error.message, problems: body.error.problems ?? [])
        }
        return AdminAPIError(status: status, code: "unexpected_reply", message: "\(peer.rawValue) answered \(status)")
    }

    /// A call whose reply is JSON of type `Reply`.
    package func json<Reply: Decodable>(
        _ method: HTTPMethod, _ path: String, on peer: Peer = .studyMetadata, token: String?, body: [UInt8]? = nil,
        forwardedFor: String? = nil, as: Reply.Type, logger: Logger
    ) async throws(AdminAPIError) -> Reply {
        let reply = try await send(method, path, on: peer, token: token, body: body, forwardedFor: forwardedFor, logger: logger)
        do {
            return try Self.decoder.decode(Reply.self, from: Data(buffer: reply.body))
        } catch {
            logger.error("admin API reply did not decode", metadata: ["path": "\(path)", "error": "\(error)"])
            throw AdminAPIError(status: reply.status, code: "unexpected_reply", message: "\(peer.rawValue) answered something unexpected")
        }
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date: \(text)"))
        }
        return decoder
    }()

    /// What a path segment keeps unescaped.
    private static let segmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))

    /// A path segment (a study or app id) escaped for a URL path. Ids are nearly always letters,
    /// digits, `-` and `_`, which need nothing: those are returned as they are without Foundation's
    /// encoder (a page writes the study's id into dozens of links).
    package static func segment(_ id: String) -> String {
        if id.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
        }) {
            return id
        }
        return id.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? id
    }
}
