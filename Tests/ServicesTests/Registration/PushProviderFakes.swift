import Crypto
import CryptoExtras
import Foundation
import JWTKit
import StudyModels
import Synchronization
import TestSupport

/// A local FCM HTTP v1 and Google OAuth token endpoint, over TLS: the RS256 assertion is checked
/// (signature with the service account's key, `iss`, `aud`, `scope`, an hour at most) before an
/// access token is issued; a send needs that token, the right project and a `message` with a
/// `token` and string-only `data`. Unknown tokens answer 404 `UNREGISTERED` as FCM does.
final class FakeFCM: Sendable {
    struct State {
        var issued: Set<String> = []
        var exchanges = 0
        var received: [JSONObject] = []
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

    var received: [JSONObject] { state.withLock { $0.received } }
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

/// A fresh 2048-bit RSA key, as a service-account file holds it (PKCS#8 PEM).
enum RSAKeyMaker {
    static func make() throws -> (pem: String, publicPEM: String) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return (key.pkcs8PEMRepresentation, key.publicKey.pemRepresentation)
    }
}
