import Configuration
import ConsoleService
import Foundation
import InternalContracts
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import RegistrationService
import ResponseService
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// A real study-metadata (fresh database, on a port) with the app CONSOLEAPP and the study
/// CONSOLE1, and a console in front of it: what the console tests drive, as a browser does.
struct ConsoleFixture: Sendable {
    static let rootEmail = "root@console.test"
    static let rootPassword = "C0nsole-Root!"
    static let consoleKey = Data(repeating: 42, count: 32).base64EncodedString()

    /// study-metadata's test client (for the admin API directly) and the root admin's token.
    let metadata: any TestClientProtocol
    let rootToken: String
    /// The console, with a cookie jar.
    let browser: Browser

    static let app = #"{"appId":"CONSOLEAPP","orgId":"ORG","name":"Console app","kind":"gateway"}"#
    static let study = #"""
        {"studyId": "CONSOLE1", "appId": "CONSOLEAPP", "name": "Console study", "tagline": "Before",
         "timeZone": "Europe/Madrid", "eligibility": {"type": "token"},
         "consent": {"visualScreens": [{"type": "overview", "title": "About", "text": "What the study is."}]}}
        """#

    /// The registration service, when the fixture runs one: its database (to seed participants)
    /// and where it keeps consent PDFs and writes e-mails.
    struct Registration: Sendable {
        let postgres: PostgresClient
        let consentDirectory: URL
        let mailDirectory: URL
    }

    var registration: Registration?

    /// The response service, when the fixture runs one: its client (the app API) and its
    /// database (to seed designs as if fetched).
    struct ResponsePeer: Sendable {
        let client: any TestClientProtocol
        let postgres: PostgresClient
    }

    var response: ResponsePeer?

    /// `withPeers`: the response and registration services too (each with its own database, on a
    /// port), CONSOLE1 published and known to the response service as running, for the pages over
    /// their admin APIs.
    ///
    /// `responseUnreachable`: the console is told a response service address where nothing
    /// listens (registration and the response service still run), for the pages that must stand
    /// without it.
    static func run(
        withPeers: Bool = false, responseUnreachable: Bool = false, _ body: @escaping @Sendable (ConsoleFixture) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { url in
            let reader = TestConfiguration.reader(
                for: .studyMetadata, databaseURL: url,
                overrides: ["studystack.adminEmail": rootEmail, "studystack.adminPassword": rootPassword]
                    .merging(try await SharedResponsePeer.overrides()) { $1 })
            let logger = { () -> Logger in
                var logger = Logger(label: "console-test")
                logger.logLevel = .warning
                return logger
            }()
            let metadataApp = try StudyMetadataService.buildApplication(reader: reader, logger: logger)
            try await metadataApp.test(.live) { metadata in
                try await TestApplication.waitUntilReady(metadata)
                let root = try await login(metadata, rootEmail, rootPassword)
                #expect(try await send(metadata, .post, "/admin/v1/apps", token: root, body: app).0 == .created)
                #expect(try await send(metadata, .put, "/admin/v1/studies/CONSOLE1/draft", token: root, body: study).0 == .created)
                let metadataURL = "http://127.0.0.1:\(metadata.port!)"
                let console = { @Sendable (peers: [String: String]) in
                    var values: [AbsoluteConfigKey: ConfigValue] = [
                        "console.key": .init(.string(consoleKey), isSecret: true),
                        "http.port": "0",
                        "studyMetadata.url": .init(.string(metadataURL), isSecret: false),
                        "log.level": "warning",
                        // A template asking for a name its page lacks fails the page, and the test.
                        "console.templateCheck": "fail",
                    ]
                    for (key, url) in peers { values[AbsoluteConfigKey(ConfigKey(key))] = .init(.string(url), isSecret: false) }
                    return try ConsoleService.buildApplication(reader: ConfigReader(provider: InMemoryProvider(values: values)), logger: logger)
                }
                let run = { @Sendable (peers: [String: String], registration: Registration?, response: ResponsePeer?) in
                    try await console(peers).test(.live) { client in
                        try await TestApplication.waitUntilReady(client)
                        try await body(ConsoleFixture(
                            metadata: metadata, rootToken: root, browser: Browser(client: client), registration: registration,
                            response: response))
                    }
                }
                guard withPeers else { return try await run([:], nil, nil) }
                let (published, publishedBody, _) = try await send(metadata, .post, "/admin/v1/studies/CONSOLE1/publish", token: root)
                #expect(published == .ok, "\(String(buffer: publishedBody))")
                try await TestDatabase.withFreshDatabase { responseDatabase in
                    let response = try ResponseService.buildApplication(
                        reader: TestConfiguration.reader(
                            for: .response, databaseURL: responseDatabase, overrides: ["studyMetadata.url": metadataURL]),
                        logger: logger)
                    try await response.test(.live) { responseClient in
                        try await TestApplication.waitUntilReady(responseClient)
                        #expect(try await announce("CONSOLE1", to: responseClient) == .ok)
                        let responseURL = "http://127.0.0.1:\(responseClient.port!)"
                        try await TestDatabase.withFreshDatabase { registrationDatabase in
                            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("console-registration-\(UUID())")
                            defer { try? FileManager.default.removeItem(at: folder) }
                            let consents = folder.appendingPathComponent("consents")
                            let mail = folder.appendingPathComponent("mail")
                            let registration = try RegistrationService.buildApplication(
                                reader: TestConfiguration.reader(
                                    for: .registration, databaseURL: registrationDatabase,
                                    overrides: [
                                        "studyMetadata.url": metadataURL, "response.url": responseURL,
                                        "consent.directory": consents.path, "mail.directory": mail.path,
                                    ]),
                                logger: logger)
                            try await registration.test(.live) { registrationClient in
                                try await TestApplication.waitUntilReady(registrationClient)
                                try await TestDatabase.withClient(url: registrationDatabase) { postgres, _ in
                                    try await TestDatabase.withClient(url: responseDatabase) { responsePostgres, _ in
                                        try await run(
                                            [
                                                "response.url": responseUnreachable ? "http://127.0.0.1:9" : responseURL,
                                                "registration.url": "http://127.0.0.1:\(registrationClient.port!)",
                                            ],
                                            Registration(postgres: postgres, consentDirectory: consents, mailDirectory: mail),
                                            ResponsePeer(client: responseClient, postgres: responsePostgres))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// CONSOLE1 running, as study-metadata's outbox tells the response service.
    static func announce(
        _ studyId: String, to response: some TestClientProtocol, version: Int = 99, properties: [ParticipantProperty] = [],
        activities: [StudyEvent.ActivityVersion] = []
    ) async throws -> HTTPResponse.Status {
        let event = StudyEvent(
            studyId: studyId, appId: "CONSOLEAPP", orgId: "ORG", status: .active, version: version, label: "1.0", consentVersion: 1,
            activities: activities, participantProperties: properties, action: "launch", at: Date())
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let body = Array(try encoder.encode(event))
        var headers = TestApplication.signedHeaders(
            caller: .studyMetadata, to: .response, method: .post, path: InternalCalls.studyEvents.template, body: body)
        headers[.contentType] = "application/json"
        return try await response.execute(uri: InternalCalls.studyEvents.template, method: .post, headers: headers, body: ByteBuffer(bytes: body)) {
            $0.status
        }
    }

    static func login(_ client: some TestClientProtocol, _ email: String, _ password: String) async throws -> String {
        let body = ByteBuffer(string: #"{"email":"\#(email)","password":"\#(password)"}"#)
        return try await client.execute(uri: "/admin/v1/login", method: .post, body: body) { response in
            let object = try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
            return try #require(object?["token"] as? String)
        }
    }

    static func send(
        _ client: some TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, token: String, body: String? = nil,
        headers: HTTPFields = [:]
    ) async throws -> (HTTPResponse.Status, ByteBuffer, HTTPFields) {
        var fields = headers
        fields[.authorization] = "Bearer \(token)"
        return try await client.execute(uri: uri, method: method, headers: fields, body: body.map { ByteBuffer(string: $0) }) {
            ($0.status, $0.body, $0.headers)
        }
    }

    /// CONSOLE1's draft as study-metadata holds it, with its revision.
    func draft() async throws -> (json: [String: Any], etag: String) {
        let (status, body, headers) = try await Self.send(metadata, .get, "/admin/v1/studies/CONSOLE1/draft", token: rootToken)
        #expect(status == .ok)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
        return (json, headers[.eTag] ?? "")
    }

    /// Invites an admin, accepts the invitation and grants `role` on CONSOLE1; returns the password.
    func makeAdmin(_ email: String, role: String) async throws -> String {
        let (status, body, _) = try await Self.send(metadata, .post, "/admin/v1/admins", token: rootToken, body: #"{"email":"\#(email)"}"#)
        #expect(status == .created)
        let invitation = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
        let id = try #require(invitation["id"] as? String)
        let token = try #require((invitation["invitation"] as? [String: Any])?["token"] as? String)
        let password = "Viewer-Passw0rd!"
        try await metadata.execute(
            uri: "/admin/v1/invitations/accept", method: .post,
            body: ByteBuffer(string: #"{"token":"\#(token)","password":"\#(password)"}"#)
        ) { #expect($0.status == .ok) }
        let granted = try await Self.send(
            metadata, .put, "/admin/v1/studies/CONSOLE1/roles/\(id)", token: rootToken, body: #"{"role":"\#(role)"}"#)
        #expect(granted.0 == .ok)
        return password
    }
}

/// The console as a browser uses it: it keeps the cookies the console sets and sends them back,
/// and reads the form tokens off the pages.
final class Browser: @unchecked Sendable {
    struct Page {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var html: String
        /// The body as it came (a download).
        var data: Data = Data()

        var location: String? { headers[.location] }

        /// The value of the first `<input name="name" value="...">` (HTML-unescaped).
        func input(_ name: String) -> String? {
            let pattern = "name=\"\(NSRegularExpression.escapedPattern(for: name))\" value=\"([^\"]*)\""
            guard let regex = try? NSRegularExpression(pattern: pattern),
                let match = regex.firstMatch(in: html, range: NSRange(html.startIndex..., in: html)),
                let range = Range(match.range(at: 1), in: html)
            else { return nil }
            return Browser.unescape(String(html[range]))
        }
    }

    let client: any TestClientProtocol
    /// Name → value; a cookie set with `Max-Age=0` is removed.
    var cookies: [String: String] = [:]
    /// The raw `Set-Cookie` lines of the last response.
    var lastSetCookies: [String] = []

    init(client: any TestClientProtocol) {
        self.client = client
    }

    func get(_ path: String) async throws -> Page {
        try await request(.get, path, body: nil)
    }

    /// `path`, following redirects as a browser does (a participant's page moves to their number).
    func getFollowing(_ path: String) async throws -> Page {
        var page = try await get(path)
        for _ in 0..<3 {
            guard page.status == .seeOther || page.status == .found, let next = page.location else { break }
            page = try await get(next)
        }
        return page
    }

    /// Posts `fields` urlencoded, as a form does.
    func post(_ path: String, _ fields: [(String, String)]) async throws -> Page {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._*"))
        let body = fields.map { name, value in
            let encode = { (text: String) in (text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text) }
            return encode(name) + "=" + encode(value)
        }.joined(separator: "&")
        return try await request(.post, path, body: body)
    }

    /// Posts `fields` and `files` (name, file name, bytes) as `multipart/form-data`, as a form
    /// with a file input does.
    func post(_ path: String, _ fields: [(String, String)], files: [(String, String, [UInt8])]) async throws -> Page {
        let boundary = "----StudyStackTest\(UInt64.random(in: 1...UInt64.max))"
        var body: [UInt8] = []
        for (name, value) in fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        for (name, filename, bytes) in files {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(filename)\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            body += bytes + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        return try await request(.post, path, body: ByteBuffer(bytes: body), contentType: "multipart/form-data; boundary=\(boundary)")
    }

    func request(_ method: HTTPRequest.Method, _ path: String, body: String?) async throws -> Page {
        try await request(method, path, body: body.map { ByteBuffer(string: $0) }, contentType: "application/x-www-form-urlencoded")
    }

    func request(_ method: HTTPRequest.Method, _ path: String, body: ByteBuffer?, contentType: String) async throws -> Page {
        var headers: HTTPFields = [:]
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
        if body != nil { headers[.contentType] = contentType }
        let page = try await client.execute(uri: path, method: method, headers: headers, body: body) {
            Page(status: $0.status, headers: $0.headers, html: String(buffer: $0.body), data: Data(buffer: $0.body))
        }
        lastSetCookies = page.headers[values: .setCookie]
        for line in lastSetCookies {
            let pair = line.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0]), value = pair.count > 1 ? String(pair[1]) : ""
            if line.contains("Max-Age=0") || value.isEmpty { cookies[name] = nil } else { cookies[name] = value }
        }
        return page
    }

    /// Signs in through the form; returns the page the browser lands on after the redirect.
    @discardableResult
    func signIn(_ email: String, _ password: String) async throws -> Page {
        let form = try await get("/signin")
        let csrf = try #require(form.input("csrf"))
        let done = try await post("/signin", [("csrf", csrf), ("next", "/"), ("email", email), ("password", password)])
        #expect(done.status == .seeOther)
        return try await get(done.location ?? "/")
    }

    /// A page's form with every value it shows, `changes` applied (nil removes a field).
    func form(of page: Page, _ changes: [String: String?]) -> [(String, String)] {
        var fields: [(String, String)] = []
        let pattern = #"<(input|textarea|select)[^>]*name="([^"]*)"[^>]*>"#
        let regex = try! NSRegularExpression(pattern: pattern)
        var seen = Set<String>()
        for match in regex.matches(in: page.html, range: NSRange(page.html.startIndex..., in: page.html)) {
            let tag = String(page.html[Range(match.range, in: page.html)!])
            let name = String(page.html[Range(match.range(at: 2), in: page.html)!])
            if seen.contains(name), !tag.contains("checkbox") { continue }
            seen.insert(name)
            if tag.contains("type=\"checkbox\"") {
                if tag.contains(" checked") {
                    fields.append((name, Self.attribute("value", in: tag) ?? "true"))
                }
            } else if tag.hasPrefix("<input") {
                fields.append((name, Self.attribute("value", in: tag) ?? ""))
            } else if tag.hasPrefix("<textarea") {
                let rest = page.html[Range(match.range, in: page.html)!.upperBound...]
                let text = rest.prefix { $0 != "<" }
                fields.append((name, Self.unescape(String(text))))
            } else {
                let rest = page.html[Range(match.range, in: page.html)!.upperBound...]
                let options = String(String(rest).components(separatedBy: "</select>")[0])
                let selected = try! NSRegularExpression(pattern: #"<option value="([^"]*)" selected>"#)
                if let found = selected.firstMatch(in: options, range: NSRange(options.startIndex..., in: options)) {
                    fields.append((name, String(options[Range(found.range(at: 1), in: options)!])))
                } else {
                    fields.append((name, ""))
                }
            }
        }
        for (name, value) in changes {
            fields.removeAll { $0.0 == name }
            if let value { fields.append((name, value)) }
        }
        return fields
    }

    static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.range(of: "\(name)=\"") else { return nil }
        return unescape(String(tag[range.upperBound...].prefix { $0 != "\"" }))
    }

    /// The text an HTML-escaped value stands for (the five entities Mustache writes).
    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
