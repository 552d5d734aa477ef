import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// The three real executables (`.build/debug/<name>`) on free ports, each with a fresh database of
/// the test cluster, calling each other over HTTP with signed requests, as `make run` starts them.
/// The registration service writes e-mail as files into `mailDirectory`.
struct Platform: Sendable {
    let metadata: ServiceProcess
    let registration: ServiceProcess
    let response: ServiceProcess
    /// Each service's database, as its own (superuser) login.
    let metadataDatabase: String
    let registrationDatabase: String
    let responseDatabase: String
    let mailDirectory: URL
    /// Where registration keeps signed consent PDFs.
    let consentDirectory: URL
    let adminToken: String
    /// The demo app's `key:token` credentials, as `POST /admin/v1/apps` returned them.
    let iosCredential: String
    let androidCredential: String
    /// DEMOSTUDY's enrollment tokens.
    let tokens: [String]
    /// The response service's environment, to start it again as it was.
    let responseEnvironment: [String: String]
    /// study-metadata's environment, to start it again as it was.
    let metadataEnvironment: [String: String]
    /// Registration's settings, to start it again after a test killed it.
    let registrationEnvironment: [String: String]

    static let adminEmail = "admin@e2e.test"
    static let adminPassword = "E2e-Admin-Passw0rd!"

    /// `INTERNAL_CALLER_KEYS` for `receiver` as `make run` writes it: only the callers it serves.
    static func callers(_ receiver: ServiceName, accepting callers: [ServiceName]) -> String {
        callers.map { "\($0.rawValue)=\(TestConfiguration.pairKey($0, to: receiver))" }.joined(separator: ",")
    }

    /// The environment of each service as `make run` gives it: the peers at `urls`, each service's
    /// database (already routed through a pooler when `pooled`), participants' queries straight
    /// to PostgreSQL at `queryDatabase`, mail written as files to `mail`.
    static func environments(
        urls: PlatformURLs, databases: (metadata: String, registration: String, response: String), queryDatabase: String,
        mail: URL, consents: URL, pooled: Bool
    ) -> [ServiceName: [String: String]] {
        var common: [String: String] = [
            "STUDYSTACK_ENCRYPTION_KEY": TestConfiguration.encryptionKey,
            "STUDY_METADATA_URL": urls.metadata, "REGISTRATION_URL": urls.registration, "RESPONSE_URL": urls.response,
            "DATABASE_MAX_CONNECTIONS": "6",
            "LOG_LEVEL": "warning",
        ]
        if pooled { common["DATABASE_POOLING"] = "transaction" }
        return [
            .studyMetadata: common.merging([
                "DATABASE_URL": databases.metadata, "INTERNAL_SIGNING_KEY": TestConfiguration.keys[.studyMetadata]!,
                "INTERNAL_CALLER_KEYS": callers(.studyMetadata, accepting: [.registration, .response]),
                "STUDYSTACK_ADMIN_EMAIL": adminEmail, "STUDYSTACK_ADMIN_PASSWORD": adminPassword,
            ]) { $1 },
            .registration: common.merging([
                "DATABASE_URL": databases.registration, "INTERNAL_SIGNING_KEY": TestConfiguration.keys[.registration]!,
                "INTERNAL_CALLER_KEYS": callers(.registration, accepting: [.studyMetadata, .response]),
                "MAIL_DIRECTORY": mail.path, "CONSENT_DIRECTORY": consents.path,
            ]) { $1 },
            .response: common.merging([
                "DATABASE_URL": databases.response, "INTERNAL_SIGNING_KEY": TestConfiguration.keys[.response]!,
                "INTERNAL_CALLER_KEYS": callers(.response, accepting: [.studyMetadata, .registration]),
                "QUERY_DATABASE_URL": queryDatabase,
            ]) { $1 },
        ]
    }

    /// Seeds what `make run` seeds through the services at these addresses: the admin signed
    /// in, app DEMOAPP, study DEMOSTUDY launched, `tokens` enrollment tokens, and the app known to
    /// registration.
    static func seedDemo(metadata: String, response: String, tokens count: Int) async throws
        -> (admin: Admin, ios: String, android: String, tokens: [String])
    {
        let admin = try await Admin.login(metadata)
        let credentials = try await admin.createDemoApp()
        try await admin.saveAndLaunchDemoStudy()
        let tokens = try await admin.tokens(responseBase: response, count: count)
        // Registration learns of the app through study-metadata's outbox, and refuses
        // sign-ups for apps it does not know: wait for the delivery, as `make run` does.
        try await admin.waitForOutbox()
        return (admin, credentials.ios, credentials.android, tokens)
    }

    /// Starts the platform, seeds the demo (app DEMOAPP, study DEMOSTUDY launched, 20 tokens), runs
    /// `body`, and stops everything. `registrationSettings` and `responseSettings` are added to
    /// those services' environments.
    /// - Parameter throughPgBouncer: the services reach their databases through PgBouncer in
    ///   transaction pooling mode (`DATABASE_POOLING=transaction`); participants' queries still
    ///   go straight to PostgreSQL.
    static func run(
        registrationSettings: [String: String] = [:], responseSettings: [String: String] = [:], throughPgBouncer: Bool = false,
        _ body: @Sendable (Platform) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { metadataDB in
            try await TestDatabase.withFreshDatabase { registrationDB in
                try await TestDatabase.withFreshDatabase { responseDB in
                    let mail = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-mail-\(UUID().uuidString)")
                    let consents = FileManager.default.temporaryDirectory.appendingPathComponent("e2e-consents-\(UUID().uuidString)")
                    defer {
                        try? FileManager.default.removeItem(at: mail)
                        try? FileManager.default.removeItem(at: consents)
                    }
                    let ports = (metadata: try SMTPTestServer.freePort(), registration: try SMTPTestServer.freePort(),
                                 response: try SMTPTestServer.freePort())
                    let bouncer = throughPgBouncer ? try await PgBouncerProcess.start(upstream: metadataDB) : nil
                    defer { bouncer?.stop() }
                    let database = { (url: String) in bouncer?.route(url) ?? url }
                    let urls = PlatformURLs(
                        metadata: "http://127.0.0.1:\(ports.metadata)", registration: "http://127.0.0.1:\(ports.registration)",
                        response: "http://127.0.0.1:\(ports.response)")
                    let settings = Self.environments(
                        urls: urls, databases: (database(metadataDB), database(registrationDB), database(responseDB)),
                        queryDatabase: try await TestDatabase.queryReaderURL(responseDB), mail: mail, consents: consents,
                        pooled: throughPgBouncer)
                    let metadata = try await ServiceProcess.start(
                        "study-metadata", environment: settings[.studyMetadata]!, port: ports.metadata)
                    let registrationEnvironment = settings[.registration]!.merging(registrationSettings) { $1 }
                    let registration = try await ServiceProcess.start("registration", environment: registrationEnvironment, port: ports.registration)
                    let responseEnvironment = settings[.response]!.merging(responseSettings) { $1 }
                    let response = try await ServiceProcess.start("response", environment: responseEnvironment, port: ports.response)
                    defer {
                        for service in [response, registration, metadata] where !service.stop() {
                            Issue.record("\(service.name) did not exit within 30 s of SIGTERM; its log ends:\n\(service.logTail())")
                        }
                    }
                    let seeded = try await Self.seedDemo(metadata: metadata.baseURL, response: response.baseURL, tokens: 20)
                    let platform = Platform(
                        metadata: metadata, registration: registration, response: response,
                        metadataDatabase: metadataDB, registrationDatabase: registrationDB, responseDatabase: responseDB,
                        mailDirectory: mail, consentDirectory: consents, adminToken: seeded.admin.token,
                        iosCredential: seeded.ios, androidCredential: seeded.android, tokens: seeded.tokens,
                        responseEnvironment: responseEnvironment, metadataEnvironment: settings[.studyMetadata]!,
                        registrationEnvironment: registrationEnvironment)
                    try await body(platform)
                }
            }
        }
    }

    var admin: Admin { Admin(base: metadata.baseURL, token: adminToken) }

    /// An app of `platform` kind pointed at this platform, signed in as nobody yet.
    func app(_ kind: MyStudiesApp.Kind) -> MyStudiesApp {
        MyStudiesApp(
            kind: kind, credential: kind == .ios ? iosCredential : androidCredential,
            wcpBase: metadata.baseURL + "/StudyMetaData/", registrationBase: registration.baseURL + "/fdahpUserRegWS/",
            responseBase: response.baseURL + "/mobileappstudy-")
    }

    /// The code in the newest verification e-mail to `email`, once at least `count` have come.
    /// Mail goes out after the request that asks for it has answered, so a resend's code is read
    /// only once its own message has arrived, never the older code it replaced.
    func verificationCode(for email: String, afterMessages count: Int = 1) async throws -> String {
        let codes = try await eventually("\(count) verification e-mails to \(email)") {
            try Self.codes(in: mailDirectory, to: email)
        } until: { $0.count >= count }
        return codes[codes.count - 1]
    }

    /// The temporary password in the newest password e-mail to `email`, once one has come.
    func temporaryPassword(for email: String) async throws -> String {
        let passwords = try await eventually("a temporary password e-mailed to \(email)") {
            try Self.codes(in: mailDirectory, to: email, matching: /temporary password is (\w+)\./)
        } until: { !$0.isEmpty }
        return passwords[passwords.count - 1]
    }

    /// The codes in the e-mails to `email`, oldest first.
    static func codes(in directory: URL, to email: String) throws -> [String] {
        try codes(in: directory, to: email, matching: /code is (\w+)\./)
    }

    /// What `pattern`'s group finds in the plain text of each e-mail to `email`, oldest first.
    static func codes(in directory: URL, to email: String, matching pattern: Regex<(Substring, Substring)>) throws -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        // File names start with the microseconds they were written at.
        // Only finished messages: each is written as a hidden `.partial` file and then renamed.
        let messages = files.filter { $0.pathExtension == "eml" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
        return try messages.compactMap { file in
            let message = try String(contentsOf: file, encoding: .utf8)
            guard message.contains("To: \(email)\r\n") || message.contains("To: \(email)\n") else { return nil }
            // Each part is base64; the plain-text one says "code is XXXXXX".
            for part in message.components(separatedBy: "Content-Transfer-Encoding: base64").dropFirst() {
                let encoded = part.split(separator: "--", maxSplits: 1).first.map(String.init) ?? ""
                let lines = encoded.split(whereSeparator: \.isNewline).joined()
                guard let data = Data(base64Encoded: String(lines)), let text = String(data: data, encoding: .utf8),
                    let match = text.firstMatch(of: pattern)
                else { continue }
                return String(match.1)
            }
            return nil
        }
    }

    /// Makes the app's `auth` expire now (as 30 minutes passing would).
    func expireAuth(_ app: MyStudiesApp) async throws {
        let hash = SecureToken.hash(app.session.auth ?? "")
        _ = try await withRegistrationDatabase { postgres, logger in
            try await postgres.query(
                "UPDATE participant_sessions SET auth_expires_at = now() - interval '1 second' WHERE auth_hash = \(hash)",
                logger: logger)
        }
    }

    /// Runs `body` with a client of the registration service's database.
    func withRegistrationDatabase<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        try await TestDatabase.withClient(url: registrationDatabase, body)
    }

    /// Stops the response service (SIGTERM) and starts it again on the same port, as a deploy
    /// does; the caller stops the new process.
    /// `killing`: SIGKILL, as a crash or the OOM killer ends it, rather than a graceful stop.
    func restartResponse(killing: Bool = false) async throws -> ServiceProcess {
        if killing {
            await response.kill()
        } else {
            guard await response.stop() else { throw TestServerError(description: "the response service did not stop on SIGTERM") }
        }
        return try await ServiceProcess.start("response", environment: responseEnvironment, port: response.port)
    }

    /// Starts study-metadata again on its port after it ended (a SIGKILL the test sent); the
    /// caller stops the new process.
    func restartMetadata() async throws -> ServiceProcess {
        try await ServiceProcess.start("study-metadata", environment: metadataEnvironment, port: metadata.port)
    }

    /// Starts registration again on its port after it ended (a SIGKILL the test sent); the caller
    /// stops the new process.
    func restartRegistration() async throws -> ServiceProcess {
        try await ServiceProcess.start("registration", environment: registrationEnvironment, port: registration.port)
    }

    /// Runs `body` with a client of study-metadata's database.
    func withMetadataDatabase<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        try await TestDatabase.withClient(url: metadataDatabase, body)
    }

    /// Runs `body` with a client of the response service's database.
    func withResponseDatabase<T: Sendable>(_ body: @Sendable (PostgresClient, Logger) async throws -> T) async throws -> T {
        try await TestDatabase.withClient(url: responseDatabase, body)
    }
}

/// Where each service answers.
struct PlatformURLs: Sendable {
    var metadata: String
    var registration: String
    var response: String
}

/// study-metadata's and the response service's admin APIs, as a research team scripts them.
struct Admin: Sendable {
    let base: String
    let token: String

    static func login(_ base: String) async throws -> Admin {
        let reply = try await Wire.send(
            .POST, base + "/admin/v1/login", json: ["email": Platform.adminEmail, "password": Platform.adminPassword])
        guard reply.status == 200, let token = reply.json?["token"]?.text else {
            throw TestServerError(description: "admin login failed: \(reply.status) \(reply.text)")
        }
        return Admin(base: base, token: token)
    }

    func send(
        _ method: HTTPMethod, _ url: String, json: Any? = nil, raw: Data? = nil, timeout: TimeAmount = .seconds(30)
    ) async throws -> Wire.Reply {
        try await Wire.send(
            method, url.hasPrefix("http") ? url : base + url, headers: [("Authorization", "Bearer \(token)")], json: json, raw: raw,
            timeout: timeout)
    }

    func createDemoApp() async throws -> (ios: String, android: String) {
        let reply = try await send(.POST, "/admin/v1/apps", json: [
            "appId": "DEMOAPP", "orgId": "DEMOORG", "name": "StudyStack Demo", "kind": "gateway",
            "ios": ["latestVersion": "1.0", "forceUpdate": false], "android": ["latestVersion": "1.0", "forceUpdate": false],
        ])
        guard reply.status == 201, let ios = reply.json?["credentials"]?["ios"]?.text,
            let android = reply.json?["credentials"]?["android"]?.text
        else { throw TestServerError(description: "creating DEMOAPP: \(reply.status) \(reply.text)") }
        return (ios, android)
    }

    /// The study `make run` seeds (scripts/demo_study.py), launched.
    func saveAndLaunchDemoStudy() async throws {
        let script = ServiceProcess.packageRoot.appendingPathComponent("scripts/demo_study.py")
        let document = try ChildProcess.run("python3", [script.path])
        let saved = try await send(.PUT, "/admin/v1/studies/DEMOSTUDY/draft", raw: document)
        guard saved.status == 201 else { throw TestServerError(description: "saving DEMOSTUDY: \(saved.status) \(saved.text)") }
        let launched = try await send(.POST, "/admin/v1/studies/DEMOSTUDY/launch")
        guard launched.status == 200 else { throw TestServerError(description: "launching: \(launched.status) \(launched.text)") }
    }

    /// Polls study-metadata's outbox until every message is delivered.
    func waitForOutbox(timeout: Duration = .seconds(30)) async throws {
        try await eventually("study-metadata's outbox drained", within: timeout) {
            try await send(.GET, "/admin/v1/outbox?undelivered=true")
        } until: { reply in
            guard reply.status == 200, case .array(let messages)? = reply.json?["messages"] else { return false }
            return messages.isEmpty
        }
    }

    /// A batch of tokens from the response service, once the launch has reached it.
    func tokens(responseBase: String, count: Int, studyId: String = "DEMOSTUDY") async throws -> [String] {
        let id = try await eventually("a token batch for \(studyId), once the launch has reached the response service") {
            let batch = try await send(.POST, responseBase + "/admin/v1/studies/\(studyId)/token-batches", json: ["count": count])
            return batch.status == 201 ? batch.json?["batchId"]?.text : nil
        }
        let csv = try await send(.GET, responseBase + "/admin/v1/studies/\(studyId)/token-batches/\(id)/tokens.csv")
        return csv.text.split(whereSeparator: \.isNewline).dropFirst().map { String($0.split(separator: ",")[0]) }
    }
}
