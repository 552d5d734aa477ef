import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ResponseService
import StudyMetadataService
import Testing
import TestSupport

/// The response service's admin API as the suites drive it: study-metadata live (it issues the
/// admin tokens), the response service pointed at it, and authenticated calls.
struct ResponseAdmin: Sendable {
    /// study-metadata live, the response service (router) pointed at it, a super-admin's token,
    /// and study SLEEPWELL known to the response service.
    /// `live`: the response service on a port of its own (for clients that are not Swift).
    func withServices(
        announce: Bool = true, live: Bool = false,
        beforeResponse: @escaping @Sendable (any TestClientProtocol, String) async throws -> Void = { _, _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, any TestClientProtocol, String, PostgresClient) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { metadataURL in
            let metadata = try StudyMetadataService.buildApplication(
                reader: TestConfiguration.reader(
                    for: .studyMetadata, databaseURL: metadataURL,
                    overrides: ["studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!"]
                        .merging(try await SharedResponsePeer.overrides()) { $1 }),
                logger: Logger(label: "metadata"))
            try await metadata.test(.live) { metadataClient in
                try await TestApplication.waitUntilReady(metadataClient)
                let root = try await MetadataAdmin().login(metadataClient, "root@studystack.test", "Sup3r-Secret!")
                try await beforeResponse(metadataClient, root)
                try await TestDatabase.withFreshDatabase { responseURL in
                    let reader = TestConfiguration.reader(
                        for: .response, databaseURL: responseURL,
                        overrides: [
                            "studyMetadata.url": "http://127.0.0.1:\(metadataClient.port!)",
                            "query.databaseURL": try await ResponseHarness.readerURL(responseURL),
                        ])
                    let response = try ResponseService.buildApplication(reader: reader, logger: Logger(label: "response"))
                    try await response.test(live ? .live : .router) { client in
                        try await TestApplication.waitUntilReady(client)
                        try await TestDatabase.withClient(url: responseURL) { postgres, _ in
                            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: responseURL)
                            if announce { #expect(try await h.studyEvent("SLEEPWELL") == .ok) }
                            try await body(client, metadataClient, root, postgres)
                        }
                    }
                }
            }
        }
    }

    func send(_ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, token: String?, body: String? = nil)
        async throws -> (HTTPResponse.Status, String, HTTPFields)
    {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) {
            ($0.status, String(buffer: $0.body), $0.headers)
        }
    }
}

extension ResponseAdmin {
    /// `send` with a body of a given type (`csvBody` is sent as `text/csv`).
    func sendTyped(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, token: String?, body: String? = nil,
        csvBody: String? = nil, type: String? = nil
    ) async throws -> (HTTPResponse.Status, String, HTTPFields) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if csvBody != nil { headers[.contentType] = "text/csv" }
        if let type { headers[.contentType] = type }
        return try await client.execute(
            uri: uri, method: method, headers: headers, body: (csvBody ?? body).map { ByteBuffer(string: $0) }
        ) { ($0.status, String(buffer: $0.body), $0.headers) }
    }
}
