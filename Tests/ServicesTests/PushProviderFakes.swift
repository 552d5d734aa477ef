import Crypto
import CryptoExtras
import Foundation
import JWTKit
import StudyModels
import Synchronization
import TestSupport

/// A local APNs: HTTP/2 over TLS only, checking what Apple checks before accepting a push: the
/// path and device token, the ES256 provider token (signature with the team's key, `kid`, `iss`,
/// `iat` within the hour), `apns-topic`, `apns-push-type`, and a JSON payload with `aps` of at
/// most 4 KB. Answers with Apple's statuses and reasons.
final class FakeAPNs: Sendable {
    struct Received: Sendable {
        var deviceToken: String
        var headers: [String: String]
        var payload: [String: JSONValue]
    }

    struct State {
        var received: [Received] = []
        var refused: [String] = []
        var unregistered: Set<String> = []
    }

    let credentials: APNsCredentials
    let state = Mutex(State())
    let server: Mutex<HTTP2TestServer?> = Mutex(nil)
    let certificates: TestCertificates

    /// Team `TEAM123456`, key `KEY1234567`, topic `org.studystack.demo`, a fresh P-256 key.
    init(certificates: TestCertificates) {
        self.certificates = certificates
        credentials = APNsCredentials(
            teamId: "TEAM123456", keyId: "KEY1234567", privateKey: P256.Signing.PrivateKey().pemRepresentation,
            topic: "org.studystack.demo", environment: .production)
    }

    var received: [Received] { state.withLock { $0.received } }
    var refused: [String] { state.withLock { $0.refused } }

    func unregister(_ token: String) {
        _ = state.withLock { $0.unregistered.insert(token) }
    }

    /// Starts listening (again on `port` when given, to come back after `stop`).
    func start(port: Int = 0) async throws -> Int {
        let server = try await HTTP2TestServer.start(certificates: certificates, port: port) { [self] request in
            await handle(request)
        }
        self.server.withLock { $0 = server }
        return server.port
    }

    func stop() async throws {
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
        guard let payload = try? JSONDecoder().decode([String: JSONValue].self, from: Data(request.body)),
            case .object? = payload["aps"]
        else { return refuse(400, "PayloadEmpty") }
        if state.withLock({ $0.unregistered.contains(token) }) {
            return .json(410, ["reason": "Unregistered", "timestamp": Int(Date().timeIntervalSince1970 * 1000)])
        }
        let headers = Dictionary(request.headers.map { ($0.name.lowercased(), $0.value) }) { first, _ in first }
        state.withLock { $0.received.append(Received(deviceToken: token, headers: headers, payload: payload)) }
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

/// A local FCM HTTP v1 and Google OAuth token endpoint, over TLS: the RS256 assertion is checked
/// (signature with the service account's key, `iss`, `aud`, `scope`, an hour at most) before an
/// access token is issued; a send needs that token, the right project and a `message` with a
/// `token` and string-only `data`. Unknown tokens answer 404 `UNREGISTERED` as FCM does.
final class FakeFCM: Sendable {
    struct State {
        var issued: Set<String> = []
        var exchanges = 0
        var received: [[String: JSONValue]] = []
        var unregistered: Set<String> = []
        var refused: [String] = []
    }

    let state = Mutex(State())
    let server: HTTP2TestServer
    let account: FCMServiceAccount
    let publicKey: JWTKit.Insecure.RSA.PublicKey

    private init(server: HTTP2TestServer, account: FCMServiceAccount, publicKey: JWTKit.Insecure.RSA.PublicKey) {
        self.server = server
        self.account = account
        self.publicKey = publicKey
    }

    static func start(certificates: TestCertificates) async throws -> FakeFCM {
        let key = try RSAKeyMaker.make()
        let box = Mutex<FakeFCM?>(nil)
        let server = try await HTTP2TestServer.start(certificates: certificates) { request in
            guard let fake = box.withLock({ $0 }) else { return .init(status: 503) }
            return await fake.handle(request)
        }
        let account = FCMServiceAccount(
            projectId: "studystack-demo", privateKeyId: "k1", privateKey: key.pem,
            clientEmail: "push@studystack-demo.iam.gserviceaccount.com", tokenURI: "\(server.url)/token")
        let fake = FakeFCM(server: server, account: account, publicKey: try JWTKit.Insecure.RSA.PublicKey(pem: key.publicPEM))
        box.withLock { $0 = fake }
        return fake
    }

    var received: [[String: JSONValue]] { state.withLock { $0.received } }
    var exchanges: Int { state.withLock { $0.exchanges } }
    var refused: [String] { state.withLock { $0.refused } }

    func unregister(_ token: String) {
        _ = state.withLock { $0.unregistered.insert(token) }
    }

    func handle(_ request: HTTP2TestServer.Request) async -> HTTP2TestServer.Reply {
        let response: HTTP2TestServer.Reply
        if request.path == "/token" {
            response = await token(request)
        } else {
            response = send(request)
        }
        if response.status != 200 {
            state.withLock { $0.refused.append(String(decoding: response.body, as: UTF8.self)) }
        }
        return response
    }

    struct Claims: JWTPayload {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    private func token(_ request: HTTP2TestServer.Request) async -> HTTP2TestServer.Reply {
        let refused = HTTP2TestServer.Reply.json(400, ["error": "invalid_grant", "error_description": "Invalid JWT."])
        guard request.method == "POST", request.header("content-type") == "application/x-www-form-urlencoded" else {
            return refused
        }
        var form: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer", let assertion = form["assertion"],
            JWTParts.header(of: assertion)?["alg"]?.text == "RS256"
        else { return refused }
        let keys = await JWTKeyCollection().add(rsa: publicKey, digestAlgorithm: .sha256)
        guard let claims = try? await keys.verify(assertion, as: Claims.self), claims.iss == account.clientEmail,
            claims.aud == account.tokenURI, claims.scope.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging"),
            claims.exp - claims.iat <= 3600, claims.exp > Int(Date().timeIntervalSince1970)
        else { return refused }
        let accessToken = "ya29." + UUID().uuidString
        state.withLock {
            $0.issued.insert(accessToken)
            $0.exchanges += 1
        }
        return .json(200, ["access_token": accessToken, "expires_in": 3599, "token_type": "Bearer"])
    }

    private func send(_ request: HTTP2TestServer.Request) -> HTTP2TestServer.Reply {
        func error(_ code: Int, _ status: String, _ errorCode: String? = nil) -> HTTP2TestServer.Reply {
            var body: [String: Any] = ["code": code, "message": status, "status": status]
            if let errorCode {
                body["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode]]
            }
            return .json(code, ["error": body])
        }
        guard request.method == "POST", request.path == "/v1/projects/\(account.projectId)/messages:send" else {
            return error(404, "NOT_FOUND")
        }
        guard let authorization = request.header("authorization"), authorization.hasPrefix("Bearer "),
            state.withLock({ $0.issued.contains(String(authorization.dropFirst("Bearer ".count))) })
        else { return error(401, "UNAUTHENTICATED") }
        guard let body = try? JSONDecoder().decode(JSONValue.self, from: Data(request.body)),
            case .object(let message)? = body["message"], case .string(let token)? = message["token"]
        else { return error(400, "INVALID_ARGUMENT") }
        if let data = message["data"] {
            guard case .object(let fields) = data, fields.values.allSatisfy({ if case .string = $0 { true } else { false } })
            else { return error(400, "INVALID_ARGUMENT") }
        }
        if state.withLock({ $0.unregistered.contains(token) }) { return error(404, "NOT_FOUND", "UNREGISTERED") }
        let count = state.withLock { state -> Int in
            state.received.append(message)
            return state.received.count
        }
        return .json(200, ["name": "projects/\(account.projectId)/messages/\(count)"])
    }
}

/// The header of a compact JWT, decoded.
enum JWTParts {
    static func header(of jwt: String) -> [String: JSONValue]? {
        guard let first = jwt.split(separator: ".").first else { return nil }
        var base64 = first.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONDecoder().decode([String: JSONValue].self, from: data)
    }
}

/// A fresh 2048-bit RSA key, as a service-account file holds it (PKCS#8 PEM).
enum RSAKeyMaker {
    static func make() throws -> (pem: String, publicPEM: String) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return (key.pkcs8PEMRepresentation, key.publicKey.pemRepresentation)
    }
}
