import Foundation
import InternalContracts
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Apps and the per-platform credentials the apps send as `Authorization: Basic key:token`.
///
/// Every change to an app is also queued for the registration service (`AppSettingsSync`), which
/// sends the app's e-mails and answers its `versionInfo`, in the transaction that makes it.
package struct AppStore: Sendable {
    /// A credential as shown once to the admin: `key:token`, ready for the app's build settings.
    package struct IssuedCredential: Codable, Sendable {
        package var platform: Platform
        package var key: String
        package var token: String
        package var basic: String { "\(key):\(token)" }

        package init(platform: Platform, key: String, token: String) {
            self.platform = platform
            self.key = key
            self.token = token
        }
    }

    /// What a credential the apps send stands for.
    package struct Credential: Sendable, Equatable {
        package var appId: String
        package var platform: Platform
        /// A test build's credential: it is also served the app's studies in testing.
        package var testing: Bool

        package init(appId: String, platform: Platform, testing: Bool) {
            self.appId = appId
            self.platform = platform
            self.testing = testing
        }
    }

    package let client: PostgresClient
    package let catalog: CatalogCache
    package let outbox: Outbox
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, catalog: CatalogCache, outbox: Outbox, audit: AuditLog, logger: Logger) {
        self.client = client
        self.catalog = catalog
        self.outbox = outbox
        self.audit = audit
        self.logger = logger
    }

    package enum CreateOutcome: Sendable {
        case created([IssuedCredential])
        /// The app id is taken, whatever its case.
        case idTaken
        /// The org id is spelled otherwise by another app (carried).
        case orgSpelledOtherwise(String)
    }

    package enum UpdateOutcome: Sendable {
        case updated
        case notFound
        case orgSpelledOtherwise(String)
    }

    /// Creates the app with a fresh credential for each platform; the audit event by `actor`
    /// commits with it.
    package func create(_ app: AppDefinition, by actor: String) async throws -> CreateOutcome {
        let issued = Platform.allCases.map { platform in
            IssuedCredential(platform: platform, key: Self.makeKey(appId: app.appId, platform: platform), token: Self.makeToken(platform))
        }
        let definition = try Self.encode(app)
        return try await client.withTransaction(logger: logger) { connection -> CreateOutcome in
            if let existing = try await otherOrgSpelling(app.orgId, on: connection) { return .orgSpelledOtherwise(existing) }
            // No conflict target: an id taken in another case (the folded unique index) is taken.
            let rows = try await connection.query(
                """
                INSERT INTO apps (app_id, org_id, definition) VALUES (\(app.appId), \(app.orgId), \(definition)::jsonb)
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger: logger)
            var created = false
            for try await _ in rows { created = true }
            guard created else { return .idTaken }
            for credential in issued {
                try await connection.query(
                    """
                    INSERT INTO app_credentials (key, app_id, platform, token_hash)
                    VALUES (\(credential.key), \(app.appId), \(credential.platform.rawValue), \(SecureToken.hash(credential.token)))
                    """, logger: logger)
            }
            try await syncToRegistration(app, revision: 1, on: connection)
            try await audit.record(actor: actor, action: "app.created", details: ["appId": app.appId], on: connection)
            try await CatalogCache.notifyChange(on: connection, logger: logger)
            return .created(issued)
        }
    }

    /// New credentials for the app's test builds, one per platform, shown once; the ones issued
    /// before are revoked in the same transaction. Nil when there is no such app.
    package func issueTestingCredentials(appId: String, by actor: String) async throws -> [IssuedCredential]? {
        let issued = Platform.allCases.map { platform in
            IssuedCredential(platform: platform, key: Self.makeKey(appId: appId, platform: platform), token: Self.makeToken(platform))
        }
        let done = try await client.withTransaction(logger: logger) { connection -> Bool in
            let rows = try await connection.query("SELECT 1 FROM apps WHERE app_id = \(appId) FOR UPDATE", logger: logger)
            var found = false
            for try await _ in rows { found = true }
            guard found else { return false }
            try await connection.query(
                """
                UPDATE app_credentials SET revoked_at = now()
                WHERE app_id = \(appId) AND testing AND revoked_at IS NULL
                """, logger: logger)
            for credential in issued {
                try await connection.query(
                    """
                    INSERT INTO app_credentials (key, app_id, platform, token_hash, testing)
                    VALUES (\(credential.key), \(appId), \(credential.platform.rawValue), \(SecureToken.hash(credential.token)), true)
                    """, logger: logger)
            }
            try await audit.record(
                actor: actor, action: "app.testing_credentials_issued", details: ["appId": appId], on: connection)
            try await CatalogCache.notifyChange(on: connection, logger: logger)
            return true
        }
        guard done else { return nil }
        catalog.invalidateAll()
        return issued
    }

    /// Whether the app has testing credentials in force.
    package func hasTestingCredentials(appId: String) async throws -> Bool {
        let rows = try await client.query(
            "SELECT 1 FROM app_credentials WHERE app_id = \(appId) AND testing AND revoked_at IS NULL LIMIT 1", logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Replaces an app's definition (its id stays); the audit event by `actor` commits with it.
    package func update(_ app: AppDefinition, by actor: String) async throws -> UpdateOutcome {
        let outcome = try await client.withTransaction(logger: logger) { connection -> UpdateOutcome in
            if let existing = try await otherOrgSpelling(app.orgId, on: connection) { return .orgSpelledOtherwise(existing) }
            let rows = try await connection.query(
                """
                UPDATE apps SET definition = \(try Self.encode(app))::jsonb, org_id = \(app.orgId), updated_at = now(),
                    revision = revision + 1
                WHERE app_id = \(app.appId) RETURNING revision
                """, logger: logger)
            var revision: Int64?
            for try await value in rows.decode(Int64.self) { revision = value }
            guard let revision else { return .notFound }
            try await syncToRegistration(app, revision: revision, on: connection)
            try await audit.record(actor: actor, action: "app.updated", details: ["appId": app.appId], on: connection)
            try await CatalogCache.notifyChange(on: connection, logger: logger)
            return .updated
        }
        if case .updated = outcome { catalog.invalidateAll() }
        return outcome
    }

    /// The spelling another app gives `orgId` (`ORG` against `org`), if any. Org ids follow the
    /// same rule as study and app ids: one organisation, one spelling. The advisory lock makes the
    /// check and the write one step for concurrent app writes.
    private func otherOrgSpelling(_ orgId: String, on connection: PostgresConnection) async throws -> String? {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtext('studystack.apps.org_id'))", logger: logger)
        let rows = try await connection.query(
            "SELECT org_id FROM apps WHERE upper(org_id) = upper(\(orgId)) AND org_id <> \(orgId) LIMIT 1", logger: logger)
        for try await existing in rows.decode(String.self) { return existing }
        return nil
    }

    private func syncToRegistration(_ app: AppDefinition, revision: Int64, on connection: PostgresConnection) async throws {
        try await outbox.enqueue(
            InternalCalls.appSettings, ["appId": app.appId],
            payload: AppSettingsSync(revision: revision, app: app), on: connection)
    }

    /// An app's definition (from the catalog cache when it is live).
    package func app(id: String) async throws -> AppDefinition? {
        try await catalog.app(id: id) {
            let rows = try await client.query("SELECT definition::text FROM apps WHERE app_id = \(id)", logger: logger)
            for try await text in rows.decode(String.self) {
                return try JSONDecoder().decode(AppDefinition.self, from: Data(text.utf8))
            }
            return nil
        }
    }

    package func list() async throws -> [AppDefinition] {
        let rows = try await client.query("SELECT definition::text FROM apps ORDER BY app_id", logger: logger)
        var apps: [AppDefinition] = []
        for try await text in rows.decode(String.self) {
            apps.append(try JSONDecoder().decode(AppDefinition.self, from: Data(text.utf8)))
        }
        return apps
    }

    /// The app and platform an `Authorization: Basic` header stands for, or nil. The apps' own
    /// quirk is tolerated: a trailing newline inside the base64 (Android's encoder adds one).
    package func authenticate(basicHeader: String) async throws -> Credential? {
        try await catalog.credential(header: basicHeader) { try await lookUp(basicHeader: basicHeader) }
    }

    private func lookUp(basicHeader: String) async throws -> Credential? {
        guard basicHeader.lowercased().hasPrefix("basic ") else { return nil }
        let encoded = basicHeader.dropFirst("basic ".count).filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: String(encoded)),
            let decoded = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
            let colon = decoded.firstIndex(of: ":")
        else { return nil }
        let key = String(decoded[..<colon])
        let token = String(decoded[decoded.index(after: colon)...])
        let rows = try await client.query(
            """
            SELECT app_id, platform, testing FROM app_credentials
            WHERE key = \(key) AND token_hash = \(SecureToken.hash(token)) AND revoked_at IS NULL
            """, logger: logger)
        for try await (appId, platform, testing) in rows.decode((String, String, Bool).self) {
            guard let platform = Platform(rawValue: platform) else { return nil }
            return Credential(appId: appId, platform: platform, testing: testing)
        }
        return nil
    }

    /// A credential key: readable, unique, without ':' (it is the Basic user name).
    package static func makeKey(appId: String, platform: Platform) -> String {
        "\(platform.rawValue)-\(SecureToken.generate().prefix(platform == .android ? 12 : 16))"
    }

    /// 256 bits for iOS; 192 for Android, whose app encodes `key:token` with Base64.DEFAULT,
    /// which breaks lines after 76 characters: a credential of up to 57 bytes stays on one line.
    package static func makeToken(_ platform: Platform) -> String {
        String(SecureToken.generate().prefix(platform == .android ? 32 : 43))
    }

    package static func encode(_ app: AppDefinition) throws -> String {
        String(decoding: try JSONEncoder().encode(app), as: UTF8.self)
    }
}
