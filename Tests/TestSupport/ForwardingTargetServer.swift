import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import StudyModels

/// A forwarding target on this machine: it speaks plain HTTP as a researcher's endpoint would,
/// checks the credentials it was told to expect, can be made to fail, and records every delivery.
public actor ForwardingTargetServer {
    public enum Auth: Sendable {
        case basic(user: String, password: String)
        /// Tokens come from `POST /token` as `{"access_token": ...}` and are expected in `X-Auth`.
        case oauth
    }

    public struct Delivery: Sendable {
        public var responseId: String
        public var body: JSONValue
        public var authorization: String?
    }

    let auth: Auth
    public private(set) var deliveries: [Delivery] = []
    public private(set) var attempts = 0
    public private(set) var tokenRequests = 0
    /// Response ids delivered while a delivery of the same response was still in progress: two
    /// senders at the same moment.
    public private(set) var overlaps: [String] = []
    private var inFlight: [String: Int] = [:]
    /// Statuses to answer, in order, before accepting again.
    var failures: [HTTPResponse.Status] = []
    var currentToken = "token-1"

    init(auth: Auth) { self.auth = auth }

    public func failNext(_ statuses: [HTTPResponse.Status]) { failures = statuses }
    public func rotateToken(_ token: String) { currentToken = token }

    func begin(_ responseId: String) {
        if inFlight[responseId, default: 0] > 0 { overlaps.append(responseId) }
        inFlight[responseId, default: 0] += 1
    }

    func end(_ responseId: String) {
        inFlight[responseId, default: 0] -= 1
    }

    func issueToken() -> String {
        tokenRequests += 1
        return currentToken
    }

    func receive(_ request: Request, body: ByteBuffer) -> HTTPResponse.Status {
        attempts += 1
        switch auth {
        case .basic(let user, let password):
            let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
            guard request.headers[.authorization] == expected else { return .unauthorized }
        case .oauth:
            guard request.headers[HTTPField.Name("X-Auth")!] == "Bearer \(currentToken)" else { return .unauthorized }
        }
        if !failures.isEmpty { return failures.removeFirst() }
        deliveries.append(
            Delivery(
                responseId: request.headers[HTTPField.Name("X-StudyStack-Response-Id")!] ?? "",
                body: (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body))) ?? .null,
                authorization: request.headers[.authorization]))
        return .ok
    }

    /// Runs the target on a free port for the length of `body`. `hold`: how long each delivery
    /// is kept open before it is answered, so that a second sender of the same response at the
    /// same moment shows as an overlap.
    public static func run(
        auth: Auth, hold: Duration = .zero, _ body: @escaping @Sendable (ForwardingTargetServer, Int) async throws -> Void
    ) async throws {
        let target = ForwardingTargetServer(auth: auth)
        let router = Router()
        router.post("/forward") { request, context -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            let responseId = request.headers[HTTPField.Name("X-StudyStack-Response-Id")!] ?? ""
            await target.begin(responseId)
            if hold > .zero { try? await Task.sleep(for: hold) }
            let status = await target.receive(request, body: bytes)
            await target.end(responseId)
            return Response(status: status)
        }
        router.post("/token") { _, _ -> Response in
            let token = await target.issueToken()
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"access_token": "\#(token)", "expires_in": 3600}"#)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in try await body(target, client.port!) }
    }
}

