import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// Service-to-service authentication: what the verifier accepts and everything it refuses.
@Suite(.needsCluster) struct InternalAuthTests {
    /// An app whose internal group also has an echo route taking a body and a query.
    func withApp(_ body: @escaping @Sendable (any TestClientProtocol, String) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { url in
            let app = try makeApp(
                databaseURL: url,
                addRoutes: { routes, _ in
                    routes.internalGroup.post("/v1/echo") { request, context -> String in
                        let bytes = try await request.body.collect(upTo: context.maxUploadSize)
                        return "\(request.uri.query ?? ""):\(String(buffer: bytes))"
                    }
                    return []
                })
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                try await body(client, url)
            }
        }
    }

    func send(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, headers: HTTPFields,
        body: String = ""
    ) async throws -> (HTTPResponse.Status, String) {
        try await client.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(string: body)) {
            ($0.status, String(buffer: $0.body))
        }
    }

    @Test func acceptsAValidSignatureAndNamesTheCaller() async throws {
        try await withApp { client, _ in
            let headers = TestApplication.signedHeaders(caller: .registration, to: .studyMetadata, method: .get, path: "/internal/v1/whoami")
            try await client.execute(uri: "/internal/v1/whoami", method: .get, headers: headers) { response in
                #expect(response.status == .ok)
                let who = try response.body.decodeJSON(WhoAmIResponse.self)
                #expect(who == WhoAmIResponse(service: "study-metadata", caller: "registration"))
            }
        }
    }

    @Test func acceptsASignedBodyAndQuery() async throws {
        try await withApp { client, _ in
            let headers = TestApplication.signedHeaders(
                caller: .response, to: .studyMetadata, method: .post, path: "/internal/v1/echo", query: "a=1&b=two",
                body: Array("{\"x\":1}".utf8))
            let (status, body) = try await send(
                client, .post, "/internal/v1/echo?a=1&b=two", headers: headers, body: "{\"x\":1}")
            #expect(status == .ok)
            #expect(body == "a=1&b=two:{\"x\":1}")
        }
    }

    @Test func refusesAMissingSignature() async throws {
        try await withApp { client, _ in
            try await client.execute(uri: "/internal/v1/whoami", method: .get) { response in
                #expect(response.status == .unauthorized)
                let error = try response.body.decodeJSON(AdminErrorBody.self)
                #expect(error.error.code == "unauthenticated")
                #expect(error.error.message.contains("X-StudyStack-Service"))
            }
        }
    }

    @Test func refusesAWrongKey() async throws {
        try await withApp { client, _ in
            let headers = TestApplication.signedHeaders(
                caller: .registration, to: .studyMetadata, key: InternalKeys.generateKey(), method: .get, path: "/internal/v1/whoami")
            let (status, body) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
            #expect(status == .unauthorized)
            #expect(body.contains("signature does not match"))
        }
    }

    @Test func refusesAnotherCallersKey() async throws {
        try await withApp { client, _ in
            // Signed with response's key but claiming to be registration.
            let headers = TestApplication.signedHeaders(
                caller: .registration, to: .studyMetadata, key: TestConfiguration.keys[.response]!, method: .get, path: "/internal/v1/whoami")
            let (status, _) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
            #expect(status == .unauthorized)
        }
    }

    @Test func refusesATamperedBody() async throws {
        try await withApp { client, _ in
            let headers = TestApplication.signedHeaders(
                caller: .response, to: .studyMetadata, method: .post, path: "/internal/v1/echo", body: Array("{\"amount\":1}".utf8))
            let (status, body) = try await send(
                client, .post, "/internal/v1/echo", headers: headers, body: "{\"amount\":1000}")
            #expect(status == .unauthorized)
            #expect(body.contains("signature does not match"))
        }
    }

    @Test func refusesATamperedPath() async throws {
        try await withApp { client, _ in
            let headers = TestApplication.signedHeaders(caller: .response, to: .studyMetadata, method: .post, path: "/internal/v1/echo")
            let (status, _) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
            #expect(status == .unauthorized)
            let sameMethod = TestApplication.signedHeaders(caller: .response, to: .studyMetadata, method: .get, path: "/internal/v1/whoami/")
            let (status2, body2) = try await send(client, .get, "/internal/v1/whoami", headers: sameMethod)
            #expect(status2 == .unauthorized)
            #expect(body2.contains("signature does not match"))
        }
    }

    @Test func refusesATamperedQueryOrMethod() async throws {
        try await withApp { client, _ in
            let headers = TestApplication.signedHeaders(
                caller: .response, to: .studyMetadata, method: .post, path: "/internal/v1/echo", query: "studyId=A")
            let (status, _) = try await send(client, .post, "/internal/v1/echo?studyId=B", headers: headers)
            #expect(status == .unauthorized)
            let getHeaders = TestApplication.signedHeaders(caller: .response, to: .studyMetadata, method: .get, path: "/internal/v1/echo")
            let (status2, _) = try await send(client, .post, "/internal/v1/echo", headers: getHeaders)
            #expect(status2 == .unauthorized)
        }
    }

    @Test func refusesATimestampSixMinutesOffEitherWay() async throws {
        try await withApp { client, _ in
            for offset in [-360.0, 360.0] {
                let headers = TestApplication.signedHeaders(
                    caller: .registration, to: .studyMetadata, method: .get, path: "/internal/v1/whoami",
                    timestamp: Date().addingTimeInterval(offset))
                let (status, body) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
                #expect(status == .unauthorized, "offset \(offset)")
                #expect(body.contains("five minutes"))
            }
            // Four minutes of skew is within the window.
            let headers = TestApplication.signedHeaders(
                caller: .registration, to: .studyMetadata, method: .get, path: "/internal/v1/whoami", timestamp: Date().addingTimeInterval(-240))
            let (status, _) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
            #expect(status == .ok)
        }
    }

    @Test func refusesAReplayedNonce() async throws {
        try await withApp { client, _ in
            let headers = TestApplication.signedHeaders(caller: .registration, to: .studyMetadata, method: .get, path: "/internal/v1/whoami")
            let (first, _) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
            let (second, body) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
            #expect(first == .ok)
            #expect(second == .unauthorized)
            #expect(body.contains("nonce already used"))
        }
    }

    @Test func refusesAReplayThatReachesASecondInstance() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let first = try makeApp(databaseURL: url)
            let second = try makeApp(databaseURL: url)
            let headers = TestApplication.signedHeaders(caller: .response, to: .studyMetadata, method: .get, path: "/internal/v1/whoami")
            try await first.test(.router) { firstClient in
                try await TestApplication.waitUntilReady(firstClient)
                try await second.test(.router) { secondClient in
                    try await TestApplication.waitUntilReady(secondClient)
                    let accepted = try await firstClient.execute(uri: "/internal/v1/whoami", method: .get, headers: headers) {
                        $0.status
                    }
                    let replayed = try await secondClient.execute(uri: "/internal/v1/whoami", method: .get, headers: headers) {
                        $0.status
                    }
                    #expect(accepted == .ok)
                    #expect(replayed == .unauthorized)
                }
            }
        }
    }

    @Test func refusesAnUnknownCallerAndAMalformedNonce() async throws {
        try await withApp { client, _ in
            var headers = TestApplication.signedHeaders(caller: .registration, to: .studyMetadata, method: .get, path: "/internal/v1/whoami")
            headers[HTTPField.Name("X-StudyStack-Service")!] = "operator"
            let (status, body) = try await send(client, .get, "/internal/v1/whoami", headers: headers)
            #expect(status == .unauthorized)
            #expect(body.contains("unknown caller"))

            let short = TestApplication.signedHeaders(
                caller: .registration, to: .studyMetadata, method: .get, path: "/internal/v1/whoami", nonce: "abc")
            let (status2, _) = try await send(client, .get, "/internal/v1/whoami", headers: short)
            #expect(status2 == .unauthorized)
        }
    }

    /// The signer end to end: InternalClient over real HTTP (async-http-client) to a live server.
    @Test func internalClientSignsRealHTTPCalls() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let app = try makeApp(
                databaseURL: url,
                addRoutes: { routes, _ in
                    routes.internalGroup.post("/v1/echo") { request, context -> String in
                        let bytes = try await request.body.collect(upTo: context.maxUploadSize)
                        return "\(context.internalCaller ?? "-"):\(request.uri.query ?? ""):\(String(buffer: bytes))"
                    }
                    return []
                })
            try await app.test(.live) { client in
                try await TestApplication.waitUntilReady(client)
                let keys = try InternalKeys(
                    ownName: .response, signingKey: TestConfiguration.keys[.response]!, callerKeys: nil)
                let internalClient = InternalClient(
                    keys: keys, peers: [.studyMetadata: URL(string: "http://127.0.0.1:\(client.port!)")!])
                let logger = Logger(label: "test")
                let who = try await internalClient.call(InternalEndpoints.whoami(on: .studyMetadata), logger: logger)
                    .reply(from: .studyMetadata)
                #expect(who == WhoAmIResponse(service: "study-metadata", caller: "response"))

                let echoed = try await internalClient.send(
                    .POST, to: .studyMetadata, path: "/internal/v1/echo", query: "studyId=S%201",
                    body: Array("{\"n\":1}".utf8), logger: logger)
                #expect(echoed.status == .ok)
                #expect(String(buffer: echoed.body) == "response:studyId=S%201:{\"n\":1}")
            }
        }
    }
}
