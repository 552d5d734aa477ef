import Foundation
import JSONText
import Logging
import PostgresNIO
import ServiceKit

/// SMART Backend Services clients of each study, the assertions they have used (for replay), and
/// the access tokens issued to them (stored as their SHA-256; docs/fhir.md, Authorisation).
package struct SMARTClientStore: Sendable {
    /// A registered client.
    package struct Client: Sendable, Equatable {
        package var clientId: String
        package var studyKey: String
        package var name: String
        package var jwks: JSONValue
        package var createdBy: String
        package var createdAt: Date
        package var revokedAt: Date?
        package var deidentified: Bool
    }

    /// What an access token lets its holder read.
    package struct Grant: Sendable, Equatable {
        package var clientId: String
        package var studyKey: String
        package var scopes: SMARTScopes.Grant
        package var expiresAt: Date
        /// The client reads participants' data de-identified, by export only.
        package var deidentified: Bool = false
    }

    package let client: PostgresClient
    package let audit: AuditLog
    package let pooling: DatabaseSettings.Pooling
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, pooling: DatabaseSettings.Pooling = .session, logger: Logger) {
        self.client = client
        self.audit = audit
        self.pooling = pooling
        self.logger = logger
    }

    /// Registers a client of the study with its public keys; its id is random (it is not a secret:
    /// the client proves itself with its private key).
    package func register(
        studyKey: String, name: String, keys: [SMARTClientKeys.Key], deidentified: Bool, by actor: String
    ) async throws -> Client {
        let clientId = SecureToken.generate()
        let jwks = SMARTClientKeys.jwks(keys)
        let text = jwks.serialized()
        let createdAt = try await client.withTransaction(logger: logger) { connection -> Date in
            let rows = try await connection.query(
                """
                INSERT INTO smart_clients (client_id, study_key, name, jwks, created_by, deidentified)
                VALUES (\(clientId), \(studyKey), \(name), \(text)::jsonb, \(actor), \(deidentified)) RETURNING created_at
                """, logger: logger)
            var created = Date()
            for try await date in rows.decode(Date.self) { created = date }
            try await audit.record(
                actor: actor, action: "fhir.client_registered", studyId: studyKey,
                details: [
                    "clientId": clientId, "name": name, "keys": keys.map { "\($0.kid) (\($0.algorithm.rawValue))" }.joined(separator: ", "),
                    "deidentified": String(deidentified),
                ],
                on: connection)
            return created
        }
        return Client(
            clientId: clientId, studyKey: studyKey, name: name, jwks: jwks, createdBy: actor, createdAt: createdAt, revokedAt: nil,
            deidentified: deidentified)
    }

    package func clients(studyKey: String) async throws -> [Client] {
        let rows = try await client.query(
            """
            SELECT client_id, study_key, name, jwks::text, created_by, created_at, revoked_at, deidentified FROM smart_clients
            WHERE study_key = \(studyKey) ORDER BY created_at, client_id
            """, logger: logger)
        var found: [Client] = []
        for try await row in rows.decode((String, String, String, String, String, Date, Date?, Bool).self) {
            found.append(try Self.client(row))
        }
        return found
    }

    /// The client by its id, revoked or not; nil when there is none.
    package func client(_ clientId: String) async throws -> Client? {
        let rows = try await client.query(
            """
            SELECT client_id, study_key, name, jwks::text, created_by, created_at, revoked_at, deidentified FROM smart_clients
            WHERE client_id = \(clientId)
            """, logger: logger)
        for try await row in rows.decode((String, String, String, String, String, Date, Date?, Bool).self) { return try Self.client(row) }
        return nil
    }

    private static func client(_ row: (String, String, String, String, String, Date, Date?, Bool)) throws -> Client {
        let jwks = try JSONValue.parse(Array(row.3.utf8), budget: JSONValue.Budget(maxBytes: SMARTClientKeys.maxBytes * 2, maxNodes: 4_000))
        return Client(
            clientId: row.0, studyKey: row.1, name: row.2, jwks: jwks, createdBy: row.4, createdAt: row.5, revokedAt: row.6,
            deidentified: row.7)
    }

    /// Revokes the client and every token it holds; false when the study has no such live client.
    package func revoke(clientId: String, studyKey: String, by actor: String) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                UPDATE smart_clients SET revoked_at = now(), revoked_by = \(actor)
                WHERE client_id = \(clientId) AND study_key = \(studyKey) AND revoked_at IS NULL RETURNING client_id
                """, logger: logger)
            var revoked = false
            for try await _ in rows.decode(String.self) { revoked = true }
            guard revoked else { return false }
            try await connection.query("DELETE FROM smart_access_tokens WHERE client_id = \(clientId)", logger: logger)
            try await audit.record(
                actor: actor, action: "fhir.client_revoked", studyId: studyKey, details: ["clientId": clientId], on: connection)
            return true
        }
    }

    /// Records an assertion's `jti` until it expires; false when the client used it before.
    /// Assertions that have expired are forgotten here, so the table holds only live ones.
    package func useAssertion(clientId: String, jti: String, expiresAt: Date) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "DELETE FROM smart_assertions WHERE client_id = \(clientId) AND expires_at < now()", logger: logger)
            let rows = try await connection.query(
                """
                INSERT INTO smart_assertions (client_id, jti, expires_at) VALUES (\(clientId), \(jti), \(expiresAt))
                ON CONFLICT DO NOTHING RETURNING jti
                """, logger: logger)
            var inserted = false
            for try await _ in rows.decode(String.self) { inserted = true }
            return inserted
        }
    }

    /// Keeps a new access token's hash and grant; its expired tokens are removed at the same time.
    package func issue(tokenHash: String, clientId: String, studyKey: String, grant: SMARTScopes.Grant, expiresAt: Date) async throws {
        let scopes = grant.text
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "DELETE FROM smart_access_tokens WHERE client_id = \(clientId) AND expires_at < now()", logger: logger)
            try await connection.query(
                """
                INSERT INTO smart_access_tokens (token_sha256, client_id, study_key, scopes, expires_at)
                VALUES (\(tokenHash), \(clientId), \(studyKey), \(scopes), \(expiresAt))
                """, logger: logger)
            try await audit.record(
                actor: "fhir-client:\(clientId)", action: "fhir.token_issued", studyId: studyKey,
                details: ["clientId": clientId, "scope": scopes, "expiresAt": ISO8601DateFormatter().string(from: expiresAt)],
                on: connection)
        }
    }

    /// The grant of a live token of a live client; nil for anything else.
    package func grant(tokenHash: String) async throws -> Grant? {
        let rows = try await client.run(GrantStatement(tokenHash: tokenHash), pooling: pooling, logger: logger)
        for try await (clientId, studyKey, scopes, expiresAt, deidentified) in rows {
            return Grant(
                clientId: clientId, studyKey: studyKey,
                scopes: SMARTScopes.Grant(scopes: scopes.split(separator: " ").map(String.init)), expiresAt: expiresAt,
                deidentified: deidentified)
        }
        return nil
    }
}
