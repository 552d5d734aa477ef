import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// The study-metadata admin API as the suites drive it: a service with a super-admin, sign-in,
/// invitations, authenticated calls, and the demo app and example study documents.
struct MetadataAdmin: Sendable {
    /// The first super-admin the service creates from its settings.
    static let adminEmail = "root@studystack.test"
    static let adminPassword = "Sup3r-Secret!"

    static let exampleURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")

    static let demoApp = #"{"appId":"DEMOAPP","orgId":"DEMOORG","name":"Demo","kind":"gateway","ios":{"latestVersion":"1.10.0","forceUpdate":false},"termsUrl":"https://example.org/terms"}"#

    struct Problems: Decodable {
        struct Body: Decodable {
            var code: String
            var problems: [ValidationProblem]?
        }

        var error: Body
    }

    static let gatewayApp = #"""
        {"appId": "DEMOAPP", "orgId": "DEMOORG", "name": "Demo", "kind": "gateway",
         "ios": {"latestVersion": "1.10.0", "forceUpdate": true, "message": {"en": "Please update.", "es": "Actualice, por favor."}},
         "android": {"latestVersion": "2.0", "forceUpdate": false},
         "gateway": {
           "info": [
             {"title": "Welcome", "text": {"en": "Research from your phone.", "es": "Investigación desde su teléfono."},
              "image": "https://example.org/a.png", "videoUrl": "https://example.org/v.mp4"},
             {"title": "Privacy", "text": "Your data is protected.", "image": "https://example.org/b.png"}
           ],
           "resources": [
             {"resourceId": "about", "title": "About", "type": "html", "content": "<p>About us</p>"},
             {"resourceId": "faq", "title": "FAQ", "type": "pdf", "content": "https://example.org/faq.pdf"}
           ]
         }}
        """#

    /// Runs `body` with a client, a super-admin token and the database URL.
    func withService(_ body: @escaping @Sendable (any TestClientProtocol, String, String) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .studyMetadata, databaseURL: url,
                overrides: ["studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!"]
                    .merging(try await SharedResponsePeer.overrides()) { $1 })
            let app = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "draft-test"))
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                let token = try await login(client, "root@studystack.test", "Sup3r-Secret!")
                try await body(client, token, url)
            }
        }
    }

    func login(_ client: some TestClientProtocol, _ email: String, _ password: String) async throws -> String {
        let body = ByteBuffer(string: #"{"email":"\#(email)","password":"\#(password)"}"#)
        return try await client.execute(uri: "/admin/v1/login", method: .post, body: body) { response in
            let object = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
            return try #require(object?["token"] as? String)
        }
    }

    /// Invites an admin, accepts the invitation and logs in; returns the token.
    func makeAdmin(_ client: some TestClientProtocol, root: String, email: String) async throws -> (String, String) {
        let invitation = try await client.execute(
            uri: "/admin/v1/admins", method: .post, headers: [.authorization: "Bearer \(root)"],
            body: ByteBuffer(string: #"{"email":"\#(email)"}"#)
        ) { response in
            try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as! [String: Any]
        }
        let id = invitation["id"] as! String
        let token = (invitation["invitation"] as! [String: Any])["token"] as! String
        try await client.execute(
            uri: "/admin/v1/invitations/accept", method: .post,
            body: ByteBuffer(string: #"{"token":"\#(token)","password":"Passw0rd!"}"#)
        ) { #expect($0.status == .ok) }
        return (id, try await login(client, email, "Passw0rd!"))
    }

    func send(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, token: String, body: String? = nil
    ) async throws -> (HTTPResponse.Status, ByteBuffer) {
        try await client.execute(
            uri: uri, method: method, headers: [.authorization: "Bearer \(token)"], body: body.map { ByteBuffer(string: $0) }
        ) { ($0.status, $0.body) }
    }
}
