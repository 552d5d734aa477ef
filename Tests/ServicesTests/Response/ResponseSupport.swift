import Foundation
import InternalContracts
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// Runs the response service against a fresh database and talks to it as the apps and
/// study-metadata do.
struct ResponseHarness: Sendable {
    let client: any TestClientProtocol
    let postgres: PostgresClient
    /// The database's URL as the service's own (superuser) role.
    let databaseURL: String

    /// The login participant queries run as (`query.databaseURL`).
    static let readerRole = TestDatabase.queryReaderRole

    var access: QueryAccess {
        QueryAccess(readerRole: Self.readerRole, encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!)
    }

    /// `url` with the participant-query role as its user (see `TestDatabase.queryReaderURL`).
    static func readerURL(_ url: String) async throws -> String {
        try await TestDatabase.queryReaderURL(url)
    }

    /// `live`: on a real port (for peers that call it), as `client.port` tells.
    static func run(
        overrides: [String: String] = [:], live: Bool = false, _ body: @escaping @Sendable (ResponseHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { url in
            var overrides = overrides
            if overrides["query.databaseURL"] == nil { overrides["query.databaseURL"] = try await readerURL(url) }
            let reader = TestConfiguration.reader(for: .response, databaseURL: url, overrides: overrides)
            let app = try ResponseService.buildApplication(reader: reader, logger: Logger(label: "response-test"))
            try await app.test(live ? .live : .router) { client in
                try await TestApplication.waitUntilReady(client)
                try await TestDatabase.withClient(url: url) { postgres, _ in
                    try await body(ResponseHarness(client: client, postgres: postgres, databaseURL: url))
                }
            }
        }
    }

    /// A study event as study-metadata's outbox delivers it.
    @discardableResult
    func studyEvent(
        _ studyId: String, status: StudyEvent.Status = .active, version: Int = 1, at: Date = Date(),
        properties: [ParticipantProperty] = [], activities: [StudyEvent.ActivityVersion] = [], as caller: ServiceName = .studyMetadata
    ) async throws -> HTTPResponse.Status {
        let event = StudyEvent(
            studyId: studyId, appId: "DEMOAPP", orgId: "DEMOORG", status: status, version: version,
            label: "1.\(version - 1)", consentVersion: 1, activities: activities, participantProperties: properties,
            action: "launch", at: at)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let body = Array(try encoder.encode(event))
        var headers = TestApplication.signedHeaders(caller: caller, to: .response, method: .post, path: InternalCalls.studyEvents.template, body: body)
        headers[.contentType] = "application/json"
        return try await client.execute(
            uri: InternalCalls.studyEvents.template, method: .post, headers: headers, body: ByteBuffer(bytes: body)) { $0.status }
    }

    /// A call as the iOS app makes it (query string, empty body, no content type), or as Android
    /// does (`json`: a JSON body).
    func call(
        _ path: String, query: [String: String] = [:], json: [String: Any]? = nil, method: HTTPRequest.Method = .post,
        headers extra: HTTPFields = [:]
    ) async throws -> (HTTPResponse.Status, JSONValue, HTTPFields) {
        var components = URLComponents()
        components.queryItems = query.isEmpty ? nil : query.map { URLQueryItem(name: $0.key, value: $0.value) }
        let uri = "/\(path)" + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
        var headers = extra
        var body: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            body = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
        }
        return try await client.execute(uri: uri, method: method, headers: headers, body: body) { response in
            let value = (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: response.body))) ?? .null
            return (response.status, value, response.headers)
        }
    }

    /// Creates a batch straight through the store (the admin API needs study-metadata; its own
    /// tests run both) and returns its tokens in order.
    func tokens(_ count: Int, study: String) async throws -> [String] {
        let logger = Logger(label: "test")
        let store = TokenStore(
            client: postgres, encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!,
            audit: AuditLog(client: postgres, logger: logger), logger: logger)
        let batch = try await store.createBatch(studyKey: study.uppercased(), count: count, createdBy: "test")
        var tokens: [String] = []
        try await store.forEachToken(in: batch) { page in tokens += page.map(\.token) }
        return tokens
    }
}

extension ResponseHarness {
    func sql(_ query: PostgresQuery) async throws {
        try await postgres.query(query, logger: Logger(label: "test"))
    }
}

extension JSONValue {
    /// `exception` of a LabKey failure envelope.
    var exception: String? { self["exception"]?.text }
}
