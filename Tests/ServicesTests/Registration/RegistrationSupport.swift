import Foundation
import InternalContracts
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import RegistrationCore
import RegistrationHTTP
import RegistrationService
import ServiceKit
import ServiceKitHTTP
import ServiceLifecycle
import StudyModels
import Testing
import TestSupport

/// Runs the registration service against a fresh database, with its mail written to a temporary
/// directory, and talks to it the way the MyStudies apps do.
struct RegistrationHarness: Sendable {
    let client: any TestClientProtocol
    let postgres: PostgresClient
    let mailDirectory: URL
    let consentDirectory: URL
    let logs: CapturedLogs

    static let demoApp = AppDefinition(appId: "DEMOAPP", orgId: "DEMOORG", name: "Demo", kind: .gateway)

    /// The same, with a real study-metadata publishing `studies` in DEMOAPP (consent uploads ask it).
    static func run(
        studies: [String], overrides: [String: String] = [:], _ body: @escaping @Sendable (RegistrationHarness) async throws -> Void
    ) async throws {
        try await StudyMetadataFixture.run(studies: studies) { metadataURL in
            try await run(overrides: overrides.merging(["studyMetadata.url": metadataURL]) { $1 }, body)
        }
    }

    /// The same, with study-metadata's admins for the admin API (a viewer on the first study).
    static func run(
        studies: [String], team: Bool, document: @escaping @Sendable (String) throws -> String = { try ExampleStudy().document(studyId: $0) },
        _ body: @escaping @Sendable (RegistrationHarness, StudyMetadataFixture.Team) async throws -> Void
    ) async throws {
        try await StudyMetadataFixture.run(studies: studies, team: team, document: document) { metadataURL, members in
            let members = try #require(members)
            try await run(overrides: ["studyMetadata.url": metadataURL]) { h in try await body(h, members) }
        }
    }

    /// `peerPort`: a second replica of the service also runs, on that port of the loopback, on the
    /// same database and directories, for other services to call (the test's own client talks
    /// to the first).
    static func run(
        overrides: [String: String] = [:], peerPort: Int? = nil, _ body: @escaping @Sendable (RegistrationHarness) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { url in
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-registration-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let mail = root.appendingPathComponent("mail")
            let consents = root.appendingPathComponent("consents")
            let logs = CapturedLogs()
            var logger = Logger(label: "registration-test") { _ in CapturingLogHandler(records: logs) }
            logger.logLevel = .trace
            let settings = ["mail.directory": mail.path, "consent.directory": consents.path].merging(overrides) { $1 }
            let reader = TestConfiguration.reader(for: .registration, databaseURL: url, overrides: settings)
            let app = try RegistrationService.buildApplication(reader: reader, logger: logger)
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                try await TestDatabase.withClient(url: url) { postgres, logger in
                    // The app the calls name, as study-metadata would have sent it (revision 0, so
                    // any revision a test sends is newer).
                    let demo = String(decoding: try JSONEncoder().encode(Self.demoApp), as: UTF8.self)
                    try await postgres.query(
                        """
                        INSERT INTO app_settings (app_id, org_id, revision, definition)
                        VALUES ('DEMOAPP', 'DEMOORG', 0, \(demo)::jsonb)
                        """, logger: logger)
                    let harness = RegistrationHarness(
                        client: client, postgres: postgres, mailDirectory: mail, consentDirectory: consents, logs: logs)
                    guard let peerPort else { return try await body(harness) }
                    let replica = try RegistrationService.buildApplication(
                        reader: TestConfiguration.reader(
                            for: .registration, databaseURL: url, overrides: settings.merging(["http.port": String(peerPort)]) { $1 }),
                        logger: Logger(label: "registration-replica"))
                    // Stopped as a deployment stops it (a graceful shutdown), so its workers and
                    // connections close at once rather than waiting out their deadlines.
                    let services = ServiceGroup(
                        configuration: .init(services: [replica], gracefulShutdownSignals: [], logger: Logger(label: "registration-replica")))
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { try await services.run() }
                        do {
                            try await body(harness)
                        } catch {
                            await services.triggerGracefulShutdown()
                            throw error
                        }
                        await services.triggerGracefulShutdown()
                        try await group.waitForAll()
                    }
                }
            }
        }
    }

    struct Reply: Sendable {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var json: JSONObject

        var statusMessage: String? { headers[HTTPField.Name("StatusMessage")!] }
        var statusCode: String? { headers[HTTPField.Name("status")!] }
        func string(_ key: String) -> String? { json[key]?.text }
    }

    /// A call as the iOS app makes it: JSON body pretty-printed, the app's headers, and `auth`
    /// and `userId` when given.
    func call(
        _ name: String, method: HTTPRequest.Method = .post, body: [String: Any]? = nil, query: String? = nil,
        auth: String? = nil, userId: String? = nil, appId: String = "DEMOAPP", orgId: String = "DEMOORG"
    ) async throws -> Reply {
        var headers: HTTPFields = [HTTPField.Name("applicationId")!: appId, HTTPField.Name("orgId")!: orgId]
        if let auth { headers[HTTPField.Name("auth")!] = auth }
        if let userId { headers[HTTPField.Name("userId")!] = userId }
        var buffer: ByteBuffer?
        if let body {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body, options: [.prettyPrinted]))
        }
        let uri = "/fdahpUserRegWS/\(name).api" + (query.map { "?\($0)" } ?? "")
        return try await client.execute(uri: uri, method: method, headers: headers, body: buffer) { response in
            let json = (try? JSONDecoder().decode(JSONObject.self, from: Data(buffer: response.body))) ?? [:]
            return Reply(status: response.status, headers: response.headers, json: json)
        }
    }

    /// The newest e-mail to `recipient`, waiting for the mail worker; its text part decoded.
    func mail(to recipient: String, after count: Int = 0, timeout: Duration = .seconds(15)) async throws -> String {
        let matching = try await eventually("more than \(count) mails to \(recipient)", within: timeout) {
            try mails().filter { $0.contains("To: \(recipient)\r\n") }
        } until: { $0.count > count }
        return Self.textPart(of: matching[matching.count - 1])
    }

    /// Every e-mail sent so far as its `.eml` text, oldest first.
    func mails() throws -> [String] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: mailDirectory.path)) ?? [])
            .filter { $0.hasSuffix(".eml") }.sorted()
        return try files.map { try String(contentsOf: mailDirectory.appendingPathComponent($0), encoding: .utf8) }
    }

    /// The first bold value in a message's text: the code or temporary password.
    func secret(in mail: String) -> String? {
        let words = mail.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "." })
        // The built-in templates put it after "is".
        guard let index = words.firstIndex(where: { $0 == "is" }), index + 1 < words.count else { return nil }
        return String(words[index + 1])
    }

    static func textPart(of eml: String) -> String {
        let parts = eml.components(separatedBy: "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n")
        guard parts.count > 1, let end = parts[1].range(of: "\r\n--") else { return "" }
        let base64 = parts[1][..<end.lowerBound].replacingOccurrences(of: "\r\n", with: "")
        return Data(base64Encoded: base64).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Registers and verifies an account; returns its user id, auth and refresh token.
    func signUp(_ email: String, password: String = "Passw0rd!") async throws -> (userId: String, auth: String, refresh: String) {
        // Mail already sent to the address (an invitation) is not the verification.
        let before = try mails().filter { $0.contains("To: \(email)\r\n") }.count
        let registered = try await call("register", body: ["emailId": email, "password": password, "appId": "org.example.app"])
        #expect(registered.status == .ok, "\(registered.statusMessage ?? "")")
        let code = try #require(secret(in: try await mail(to: email, after: before)))
        let verified = try await call("verify", body: ["emailId": email, "code": code], auth: registered.string("auth"))
        #expect(verified.status == .ok)
        return (try #require(registered.string("userId")), try #require(registered.string("auth")),
                try #require(registered.string("refreshToken")))
    }

    /// An admin API call with study-metadata's bearer `token`; the body as it came.
    func admin(
        _ method: HTTPRequest.Method, _ path: String, token: String?, body: String? = nil
    ) async throws -> (status: HTTPResponse.Status, body: Data, headers: HTTPFields) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if body != nil { headers[.contentType] = "application/json" }
        return try await client.execute(uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) }) {
            ($0.status, Data(buffer: $0.body), $0.headers)
        }
    }

    /// The actors of the audit events named `action`, oldest first.
    func auditActors(_ action: String) async throws -> [String] {
        let rows = try await postgres.query(
            "SELECT actor FROM audit_events WHERE action = \(action) ORDER BY id", logger: Logger(label: "test"))
        var actors: [String] = []
        for try await actor in rows.decode(String.self) { actors.append(actor) }
        return actors
    }

    /// Joins `studyId` as the app does after enrolling, with `token` as the response service's id.
    func join(_ studyId: String, auth: String, userId: String, token: String = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()) async throws {
        let joined = try await call(
            "updateStudyState", body: ["studies": [["studyId": studyId, "status": "inProgress", "participantId": token]]],
            auth: auth, userId: userId)
        #expect(joined.status == .ok, "\(joined.statusMessage ?? "")")
    }

    /// The one integer `query` selects.
    func count(_ query: PostgresQuery) async throws -> Int { try await postgres.count(query) }

    func sql(_ query: PostgresQuery) async throws {
        try await postgres.query(query, logger: Logger(label: "test"))
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
}

/// The stored form of a token, for tests that age a session in SQL.
enum SecureTokenHash {
    static func of(_ token: String) -> String { SecureToken.hash(token) }
}

extension RegistrationHarness {
    /// Sends an app definition as study-metadata does (signed `PUT /internal/v1/apps/{appId}`).
    func sendApp(_ app: AppDefinition, revision: Int64, as caller: ServiceName = .studyMetadata) async throws
        -> (HTTPResponse.Status, JSONObject)
    {
        let path = try InternalCalls.appSettings.path(["appId": app.appId])
        let body = Array(try JSONEncoder().encode(AppSettingsSync(revision: revision, app: app)))
        return try await signed(.put, path, body: body, as: caller)
    }

    /// A signed internal call.
    func signed(_ method: HTTPRequest.Method, _ path: String, body: [UInt8] = [], as caller: ServiceName = .studyMetadata)
        async throws -> (HTTPResponse.Status, JSONObject)
    {
        var headers = TestApplication.signedHeaders(caller: caller, to: .registration, method: method, path: path, body: body)
        if !body.isEmpty { headers[.contentType] = "application/json" }
        return try await client.execute(
            uri: path, method: method, headers: headers, body: body.isEmpty ? nil : ByteBuffer(bytes: body)
        ) { ($0.status, (try? JSONDecoder().decode(JSONObject.self, from: Data(buffer: $0.body))) ?? [:]) }
    }

    /// The newest e-mail to `recipient` as the whole `.eml` text (headers and parts).
    func rawMail(to recipient: String, timeout: Duration = .seconds(15)) async throws -> String {
        try await eventually("a mail to \(recipient)", within: timeout) {
            try mails().last { $0.contains("To: \(recipient)\r\n") }
        }
    }

    static func htmlPart(of eml: String) -> String {
        let parts = eml.components(separatedBy: "Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n")
        guard parts.count > 1, let end = parts[1].range(of: "\r\n--") else { return "" }
        let base64 = parts[1][..<end.lowerBound].replacingOccurrences(of: "\r\n", with: "")
        return Data(base64Encoded: base64).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

extension RegistrationHarness {
    /// Hands notifications over as study-metadata's outbox does.
    func deliver(_ batch: NotificationBatch, as caller: ServiceName = .studyMetadata) async throws
        -> (HTTPResponse.Status, JSONObject)
    {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let body = Array(try encoder.encode(batch))
        var headers = TestApplication.signedHeaders(caller: caller, to: .registration, method: .post, path: "/internal/v1/notifications", body: body)
        headers[.contentType] = "application/json"
        return try await client.execute(
            uri: "/internal/v1/notifications", method: .post, headers: headers, body: ByteBuffer(bytes: body)
        ) { ($0.status, (try? JSONDecoder().decode(JSONObject.self, from: Data(buffer: $0.body))) ?? [:]) }
    }

    func device(_ user: (userId: String, auth: String, refresh: String), os: String, token: String,
                remote: Bool = true) async throws {
        let body: [String: Any] = [
            "settings": ["remoteNotifications": remote], "info": ["os": os, "appVersion": "1.0", "deviceToken": token],
        ]
        #expect(try await call("updateUserProfile", body: body, auth: user.auth, userId: user.userId).status == .ok)
    }

    func join(_ user: (userId: String, auth: String, refresh: String), status: String, studyId: String = "S1") async throws {
        #expect(try await call(
            "updateStudyState", body: ["studies": [["studyId": studyId, "status": status, "participantId": "p"]]],
            auth: user.auth, userId: user.userId).status == .ok)
    }

}
