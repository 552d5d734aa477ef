import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Synchronization
import Testing
import TestSupport

/// The shared middleware chain: request ids, body limits, JSON errors, error formats, metrics.
@Suite(.needsCluster) struct HTTPBehaviourTests {
    struct Item: Decodable { var count: Int }
    struct Payload: Decodable {
        var name: String
        var items: [Item]
    }

    func withApp(
        logger: Logger = Logger(label: "test"), _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { url in
            let app = try makeApp(
                databaseURL: url, overrides: ["http.maxBodySize": "2048"], logger: logger,
                errorFormat: { path in
                    if path.hasPrefix("/fdahpUserRegWS/") { return .statusMessage }
                    if path.hasPrefix("/mobileappstudy-") { return .labKey }
                    return .admin
                },
                addRoutes: { routes, _ in
                routes.router.post("/admin/v1/echo") { request, context -> String in
                    let payload = try await JSONBody.decode(Payload.self, from: request, context: context)
                    return "\(payload.name):\(payload.items.map(\.count))"
                }
                routes.router.get("/fdahpUserRegWS/fail.api") { _, _ -> String in
                    throw APIError.unauthenticated("Session expired.")
                }
                routes.router.get("/mobileappstudy-fail.api") { _, _ -> String in
                    throw APIError.badRequest("Token is required", field: "token")
                }
                routes.router.get("/admin/v1/items/:id") { _, _ -> String in
                    throw APIError.notFound("no such item")
                }
                routes.router.put("/admin/v1/items/:id") { _, _ -> String in "stored" }
                routes.router.get("/admin/v1/crash") { _, _ -> String in
                    struct Unexpected: Error {}
                    throw Unexpected()
                }
                return []
            })
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                try await body(client)
            }
        }
    }

    @Test func echoesOrMakesARequestID() async throws {
        try await withApp { client in
            try await client.execute(uri: "/healthz", method: .get, headers: [RequestIDMiddleware.header: "abc-123"]) {
                #expect($0.headers[RequestIDMiddleware.header] == "abc-123")
            }
            // A generated id is the process's random prefix and a counter: two never repeat.
            let first = try await client.execute(uri: "/healthz", method: .get) { $0.headers[RequestIDMiddleware.header] }
            let second = try await client.execute(uri: "/healthz", method: .get) { $0.headers[RequestIDMiddleware.header] }
            #expect(first?.count ?? 0 >= 14)
            #expect(first != second)
            #expect(first?.prefix(13) == second?.prefix(13))
            // A header that could forge log lines is replaced, not echoed.
            try await client.execute(
                uri: "/healthz", method: .get, headers: [RequestIDMiddleware.header: "bad id\" injected"]
            ) {
                let id = $0.headers[RequestIDMiddleware.header]
                #expect(id != nil && id != "bad id\" injected")
            }
        }
    }

    @Test func putsTheRequestIDOnLogLines() async throws {
        let records = CapturedLogs()
        let logger = Logger(label: "captured") { _ in CapturingLogHandler(records: records) }
        try await withApp(logger: logger) { client in
            try await client.execute(uri: "/healthz", method: .get, headers: [RequestIDMiddleware.header: "trace-me-1"]) {
                #expect($0.status == .ok)
            }
        }
        let lines = records.lines.withLock { $0 }.filter { $0.metadata["request_id"] == "trace-me-1" }
        #expect(lines.contains { $0.message == "request" && $0.metadata["path"] == "/healthz" })
    }

    @Test func refusesAnOversizedBodyWith413() async throws {
        try await withApp { client in
            let big = String(repeating: "x", count: 4096)
            try await client.execute(uri: "/admin/v1/echo", method: .post, body: ByteBuffer(string: big)) { response in
                #expect(response.status == .contentTooLarge)
                let error = try response.body.decodeJSON(AdminErrorBody.self)
                #expect(error.error.code == "body_too_large")
            }
        }
    }

    @Test func namesTheFieldOfAJSONDecodingFailure() async throws {
        try await withApp { client in
            let cases: [(String, String)] = [
                (#"{"name":"a","items":[{"count":"x"}]}"#, "field 'items[0].count' must be an integer"),
                (#"{"items":[]}"#, "missing field 'name'"),
                (#"{"name":null,"items":[]}"#, "field 'name' must be a string, not null"),
                (#"{"name":"a","items":{}}"#, "field 'items' must be an array"),
                ("not json", "request body is not valid JSON"),
                ("", "request body is empty; a JSON object is expected"),
            ]
            for (body, message) in cases {
                try await client.execute(uri: "/admin/v1/echo", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest, "\(body)")
                    let error = try response.body.decodeJSON(AdminErrorBody.self)
                    #expect(error.error.message == message)
                }
            }
            try await client.execute(
                uri: "/admin/v1/echo", method: .post, body: ByteBuffer(string: #"{"name":"a","items":[{"count":2}]}"#)
            ) {
                #expect($0.status == .ok)
                #expect(String(buffer: $0.body) == "a:[2]")
            }
        }
    }

    @Test func rendersEachAPIFamilysErrorFormat() async throws {
        try await withApp { client in
            try await client.execute(uri: "/fdahpUserRegWS/fail.api", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[HTTPField.Name("StatusMessage")!] == "Session expired.")
                #expect(response.headers[HTTPField.Name("status")!] == "101")
                #expect(response.headers[HTTPField.Name("title")!] == "Unauthorized")
            }
            try await client.execute(uri: "/mobileappstudy-fail.api", method: .get) { response in
                #expect(response.status == .badRequest)
                let envelope = try response.body.decodeJSON(LabKeyErrorEnvelope.self)
                #expect(envelope.success == false)
                #expect(envelope.exception == "Token is required")
                #expect(envelope.errors.first?.field == "token")
            }
            try await client.execute(uri: "/admin/v1/nothing-here", method: .get) { response in
                #expect(response.status == .notFound)
                let error = try response.body.decodeJSON(AdminErrorBody.self)
                #expect(error.error.code == "not_found")
            }
            try await client.execute(uri: "/admin/v1/crash", method: .get) { response in
                #expect(response.status == .internalServerError)
                let error = try response.body.decodeJSON(AdminErrorBody.self)
                #expect(error.error.message == "internal server error")
            }
        }
    }

    @Test func aMethodThePathDoesNotServeGets405WithAllow() async throws {
        try await withApp { client in
            try await client.execute(uri: "/healthz", method: .init("TRACE")!) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET")
                #expect((try? response.body.decodeJSON(AdminErrorBody.self))?.error.code == "method_not_allowed")
            }
            try await client.execute(uri: "/admin/v1/items/7", method: .delete) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, PUT")
            }
            try await client.execute(uri: "/mobileappstudy-fail.api", method: .post) { response in
                #expect(response.status == .methodNotAllowed)
                #expect((try? response.body.decodeJSON(LabKeyErrorEnvelope.self))?.success == false)
            }
            // A route's own 404 stays a 404, and a path no route serves is still not found.
            try await client.execute(uri: "/admin/v1/items/7", method: .get) { #expect($0.status == .notFound) }
            try await client.execute(uri: "/admin/v1/items/7/parts", method: .delete) { #expect($0.status == .notFound) }
        }
    }

    @Test func exposesPrometheusMetrics() async throws {
        try await withApp { client in
            for _ in 0..<3 { try await client.execute(uri: "/healthz", method: .get) { _ in } }
            // A method a client made up is counted, but not under a series of its own name.
            let madeUp = try #require(HTTPRequest.Method("PROPFIND"))
            try await client.execute(uri: "/healthz", method: madeUp) { _ in }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                let text = String(buffer: response.body)
                #expect(text.contains(#"studystack_http_requests_total{method="GET",route="/healthz",status="200"} 3"#))
                #expect(text.contains(#"studystack_http_requests_total{method="other""#))
                #expect(!text.contains("PROPFIND"))
                #expect(text.contains(#"studystack_http_request_duration_seconds_bucket{method="GET",route="/healthz",status="200",le="#))
                #expect(text.contains("studystack_db_pool_max_connections 5"))
                #expect(text.contains("studystack_db_pool_up 1"))
                #expect(text.contains(#"studystack_db_pool_connections{state="idle"}"#))
                // Every service watches its internal outbox; nothing is queued here.
                #expect(text.contains(#"studystack_queue_depth{queue="internal_outbox"} 0"#))
                #expect(text.contains(#"studystack_queue_oldest_seconds{queue="internal_outbox"} 0"#))
            }
        }
    }
}

/// Log records captured for assertions.
