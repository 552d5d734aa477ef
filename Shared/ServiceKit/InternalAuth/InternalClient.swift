import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The only way a StudyStack service calls another: every request is signed with this
/// service's key and sent through async-http-client.
public struct InternalClient: Sendable {
    /// What the peer answered. (A `Reply`: in StudyStack, a "response" is a participant's
    /// survey response.)
    public struct Reply: Sendable {
        public var status: HTTPResponseStatus
        public var headers: HTTPHeaders
        public var body: ByteBuffer
    }

    public let keys: InternalKeys
    public let peers: [ServiceName: URL]
    let httpClient: HTTPClient
    let timeout: TimeAmount
    /// Largest reply body accepted from a peer.
    let maxResponseBytes: Int

    public init(
        keys: InternalKeys, peers: [ServiceName: URL], httpClient: HTTPClient = .shared,
        timeout: TimeAmount = .seconds(10), maxResponseBytes: Int = 64 * 1024 * 1024
    ) {
        self.keys = keys
        self.peers = peers
        self.httpClient = httpClient
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }

    /// The four authentication headers for a request. Exposed for tests and operator tools.
    public static func signatureHeaders(
        caller: String, key: SymmetricKeyBox, method: String, path: String, query: String?, body: [UInt8],
        timestamp: Date = Date(), nonce: String = RequestSignature.makeNonce()
    ) -> [(String, String)] {
        let seconds = Int64(timestamp.timeIntervalSince1970.rounded(.down))
        let canonical = RequestSignature.canonicalString(
            caller: caller, method: method, path: path, query: query ?? "", timestamp: seconds, nonce: nonce, body: body)
        return [
            (RequestSignature.serviceHeader, caller),
            (RequestSignature.timestampHeader, String(seconds)),
            (RequestSignature.nonceHeader, nonce),
            (RequestSignature.signatureHeader, RequestSignature.sign(canonical, key: key.key)),
        ]
    }

    /// Sends a signed request to `peer`. `path` must start with `/internal/`. `waitingAtMost`: a
    /// longer wait than the client's for a call known to take long (nil: the client's).
    public func send(
        _ method: HTTPMethod, to peer: ServiceName, path: String, query: String? = nil, body: [UInt8] = [],
        contentType: String? = "application/json", waitingAtMost: TimeAmount? = nil, logger: Logger
    ) async throws -> Reply {
        guard path.hasPrefix("/internal/") else { throw InternalCallError(peer: peer, reason: "\(path) is not an /internal/ path") }
        guard let base = peers[peer] else { throw InternalCallError(peer: peer, reason: "no URL configured") }
        var url = base.absoluteString
        if url.hasSuffix("/") { url.removeLast() }
        url += path
        if let query, !query.isEmpty { url += "?" + query }

        return try await StaleConnection.retrying(method) {
            var request = HTTPClientRequest(url: url)
            request.method = method
            for (name, value) in Self.signatureHeaders(
                caller: keys.ownName.rawValue, key: SymmetricKeyBox(keys.signingKey(for: peer)), method: method.rawValue,
                path: path, query: query, body: body)
            {
                request.headers.add(name: name, value: value)
            }
            if let contentType, !body.isEmpty { request.headers.add(name: "Content-Type", value: contentType) }
            if let requestID = logger[metadataKey: "request_id"] {
                request.headers.add(name: "X-Request-Id", value: "\(requestID)")
            }
            request.body = .bytes(ByteBuffer(bytes: body))

            let response = try await httpClient.execute(request, timeout: waitingAtMost ?? timeout, logger: logger)
            let bytes = try await response.body.collect(upTo: maxResponseBytes)
            return Reply(status: response.status, headers: response.headers, body: bytes)
        }
    }

    /// Calls `endpoint` on its receiver: the path built from `parameters`, the body written as the
    /// endpoint's type says. A status the endpoint answers with is decoded as its reply, a refusal
    /// it declares is returned as one, and anything else (or no answer) throws `InternalCallError`.
    public func call<Body, Reply>(
        _ endpoint: InternalEndpoint<Body, Reply>, _ parameters: [String: String] = [:], query: String? = nil, body: Body,
        waitingAtMost: TimeAmount? = nil, logger: Logger
    ) async throws -> InternalAnswer<Reply> {
        let path = try endpoint.path(parameters)
        let reply = try await send(
            endpoint.method, to: endpoint.receiver, path: path, query: query, body: try body.wireBytes(),
            contentType: Body.contentType, waitingAtMost: waitingAtMost, logger: logger)
        let status = Int(reply.status.code)
        if endpoint.answers.contains(status) {
            do {
                return .answered(try Reply.fromWire(reply.body))
            } catch {
                throw InternalCallError(peer: endpoint.receiver, reason: "\(endpoint.method) \(path) answered \(status) with a body that does not read")
            }
        }
        if let refusal = endpoint.refusal(for: status) { return .refused(refusal, body: reply.body) }
        throw InternalCallError(
            peer: endpoint.receiver,
            reason: "\(endpoint.method) \(path) answered \(status): \(String(buffer: reply.body).prefix(200))", status: status)
    }

    /// `call` for an endpoint that takes no body.
    public func call<Reply>(
        _ endpoint: InternalEndpoint<NoContent, Reply>, _ parameters: [String: String] = [:], query: String? = nil,
        waitingAtMost: TimeAmount? = nil, logger: Logger
    ) async throws -> InternalAnswer<Reply> {
        try await call(endpoint, parameters, query: query, body: NoContent(), waitingAtMost: waitingAtMost, logger: logger)
    }
}

/// A wrapper that lets callers outside ServiceKit pass a key without importing Crypto.
public struct SymmetricKeyBox: Sendable {
    let key: SymmetricKey
    public init(_ key: SymmetricKey) { self.key = key }
    public init?(base64: String) {
        guard let data = Data(base64Encoded: base64) else { return nil }
        key = SymmetricKey(data: data)
    }
}

public struct InternalCallError: Error, CustomStringConvertible, Sendable {
    public let peer: ServiceName
    public let reason: String
    /// The status the peer answered with, when it answered one its endpoint does not define (nil:
    /// it could not be reached, or its reply did not read).
    public let status: Int?

    public init(peer: ServiceName, reason: String, status: Int? = nil) {
        self.peer = peer
        self.reason = reason
        self.status = status
    }
    public var description: String { "internal call to \(peer.rawValue) failed: \(reason)" }
}
