import Crypto
import Foundation
import JWTKit
import StudyModels
import Synchronization

/// A local APNs: HTTP/2 over TLS only, checking what Apple checks before accepting a push: the
/// path and device token, the ES256 provider token (signature with the team's key, `kid`, `iss`,
/// `iat` within the hour), `apns-topic`, `apns-push-type`, and a JSON payload with `aps` of at
/// most 4 KB. Answers with Apple's statuses and reasons.
public final class FakeAPNs: Sendable {
    public struct Received: Sendable {
        public var deviceToken: String
        public var headers: [String: String]
        public var payload: JSONObject
        /// When it was accepted, in seconds since 1970.
        public var acceptedAt: Double
    }

    struct State {
        var received: [Received] = []
        var refused: [String] = []
        var unregistered: Set<String> = []
    }

    public let credentials: APNsCredentials
    let state = Mutex(State())
    let server: Mutex<HTTP2TestServer?> = Mutex(nil)
    let certificates: TestCertificates

    /// Team `TEAM123456`, key `KEY1234567`, topic `org.studystack.demo`, a fresh P-256 key.
    public init(certificates: TestCertificates) {
        self.certificates = certificates
        credentials = APNsCredentials(
            teamId: "TEAM123456", keyId: "KEY1234567", privateKey: P256.Signing.PrivateKey().pemRepresentation,
            topic: "org.studystack.demo", environment: .production)
    }

    /// The port it listens on while started.
    public var port: Int? { server.withLock { $0?.port } }

    public var received: [Received] { state.withLock { $0.received } }
    public var refused: [String] { state.withLock { $0.refused } }

    public func unregister(_ token: String) {
        _ = state.withLock { $0.unregistered.insert(token) }
    }

    /// Starts listening (again on `port` when given, to come back after `stop`).
    public func start(port: Int = 0) async throws -> Int {
        let server = try await HTTP2TestServer.start(certificates: certificates, port: port) { [self] request in
            await handle(request)
        }
        self.server.withLock { $0 = server }
        return server.port
    }

    public func stop() async throws {
        let running = server.withLock { server -> HTTP2TestServer? in
            defer { server = nil }
            return server
        }
        try await running?.stop()
    }

    func handle(_ request: HTTP2TestServer.Request) async -> HTTP2TestServer.Reply {
        let response = await check(request)
        if response.status != 200 {
            let reason = (try? JSONDecoder().decode([String: String].self, from: Data(response.body)))?["reason"] ?? ""
            state.withLock { $0.refused.append(reason) }
        }
        return response
    }

    private func check(_ request: HTTP2TestServer.Request) async -> HTTP2TestServer.Reply {
        func refuse(_ status: Int, _ reason: String) -> HTTP2TestServer.Reply {
            .json(status, ["reason": reason])
        }
        guard request.method == "POST" else { return refuse(405, "MethodNotAllowed") }
        guard request.path.hasPrefix("/3/device/") else { return refuse(404, "BadPath") }
        let token = String(request.path.dropFirst("/3/device/".count))
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else { return refuse(400, "BadDeviceToken") }
        guard let authorization = request.header("authorization"), authorization.hasPrefix("bearer ") else {
            return refuse(403, "MissingProviderToken")
        }
        let jwt = String(authorization.dropFirst("bearer ".count))
        guard await isValidProviderToken(jwt) else { return refuse(403, "InvalidProviderToken") }
        guard request.header("apns-topic") == credentials.topic else { return refuse(400, "DeviceTokenNotForTopic") }
        guard ["alert", "background"].contains(request.header("apns-push-type") ?? "") else {
            return refuse(400, "InvalidPushType")
        }
        guard request.body.count <= 4096 else { return refuse(413, "PayloadTooLarge") }
        guard let payload = try? JSONDecoder().decode(JSONObject.self, from: Data(request.body)),
            case .object? = payload["aps"]
        else { return refuse(400, "PayloadEmpty") }
        if state.withLock({ $0.unregistered.contains(token) }) {
            return .json(410, ["reason": "Unregistered", "timestamp": Int(Date().timeIntervalSince1970 * 1000)])
        }
        let headers = Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }) { first, _ in first }
        state.withLock { $0.received.append(Received(
            deviceToken: token, headers: headers, payload: payload, acceptedAt: Date().timeIntervalSince1970)) }
        return HTTP2TestServer.Reply(status: 200, headers: [("apns-id", UUID().uuidString)])
    }

    struct Claims: JWTPayload {
        var iss: String
        var iat: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private func isValidProviderToken(_ jwt: String) async -> Bool {
        guard let header = JWTParts.header(of: jwt), header["alg"]?.text == "ES256",
            header["kid"]?.text == credentials.keyId,
            let publicKey = try? ES256PublicKey(pem: P256.Signing.PrivateKey(pemRepresentation: credentials.privateKey).publicKey.pemRepresentation)
        else { return false }
        let keys = await JWTKeyCollection().add(ecdsa: publicKey, kid: JWKIdentifier(string: credentials.keyId))
        guard let claims = try? await keys.verify(jwt, as: Claims.self) else { return false }
        return claims.iss == credentials.teamId && abs(Int(Date().timeIntervalSince1970) - claims.iat) < 3600
    }
}

/// The header of a compact JWT, decoded.
public enum JWTParts {
    public static func header(of jwt: String) -> JSONObject? {
        guard let first = jwt.split(separator: ".").first else { return nil }
        var base64 = first.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode(JSONObject.self, from: data)
    }
}
