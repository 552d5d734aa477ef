import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// API keys: what researchers' scripts (LabKey's client libraries) sign in with to read study
/// data. A key is one admin's and acts with that admin's roles at the moment it is used, so a
/// role taken away, a disabled admin, an expired or revoked key stops it at once. The key is 256
/// random bits, shown once; only its SHA-256 is stored (a secret that long needs no slow hash).
package struct APIKeyStore: Sendable {
    /// The live keys one admin may hold: enough for a script per project, few enough to review.
    package static let maximumLive = 20
    package static let defaultDays = 90
    package static let maximumDays = 365
    /// A key's use is written to the audit log at most this often (scripts page through tables
    /// in bursts of requests; one event a minute says who read, without an event per page).
    package static let useAuditSeconds = 60
    /// What every key starts with, so one found in a script or a log is known for what it is.
    package static let prefix = "ssk_"

    package enum Refusal: Error, Equatable {
        case tooMany
    }

    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// A new key for `admin`, living `days` days; `Refusal.tooMany` past `maximumLive`.
    package func create(for admin: AuthenticatedAdmin, name: String, days: Int) async throws -> APIKeyCreated {
        let key = Self.prefix + SecureToken.generate()
        let id = UUID()
        let expiresAt = Date().addingTimeInterval(TimeInterval(days) * 86_400)
        do {
            try await client.withTransaction(logger: logger) { connection in
                // One admin's keys are counted and added one request at a time.
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended(\("api-keys:" + admin.id.uuidString), 0))", logger: logger)
                var live = 0
                for try await count in try await connection.query(
                    "SELECT count(*)::int FROM api_keys WHERE admin_id = \(admin.id) AND revoked_at IS NULL AND expires_at > now()",
                    logger: logger
                ).decode(Int.self) { live = count }
                guard live < Self.maximumLive else { throw Refusal.tooMany }
                try await connection.query(
                    """
                    INSERT INTO api_keys (id, admin_id, name, key_hash, expires_at)
                    VALUES (\(id), \(admin.id), \(name), \(SecureToken.hash(key)), \(expiresAt))
                    """, logger: logger)
                try await audit.record(
                    actor: admin.email, action: "api_keys.created",
                    details: ["id": id.uuidString.lowercased(), "name": name, "days": String(days)], on: connection)
            }
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? Refusal { throw refusal }
            throw error
        }
        return APIKeyCreated(id: id, key: key, expiresAt: expiresAt)
    }

    /// The admin's own keys, newest first, live or not.
    package func list(adminId: UUID) async throws -> [APIKeySummary] {
        var keys: [APIKeySummary] = []
        for try await (id, name, created, expires, used, revoked) in try await client.query(
            """
            SELECT id, name, created_at, expires_at, last_used_at, revoked_at FROM api_keys
            WHERE admin_id = \(adminId) ORDER BY created_at DESC
            """, logger: logger
        ).decode((UUID, String, Date, Date, Date?, Date?).self) {
            keys.append(.init(id: id, name: name, createdAt: created, expiresAt: expires, lastUsedAt: used, revokedAt: revoked))
        }
        return keys
    }

    /// Revokes one of the admin's keys; false when the admin has no key with that id. Revoking a
    /// revoked key changes nothing.
    package func revoke(_ id: UUID, of admin: AuthenticatedAdmin) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            var found: (name: String, wasLive: Bool)?
            for try await (name, live) in try await connection.query(
                "SELECT name, revoked_at IS NULL FROM api_keys WHERE id = \(id) AND admin_id = \(admin.id) FOR UPDATE",
                logger: logger
            ).decode((String, Bool).self) { found = (name, live) }
            guard let found else { return false }
            if found.wasLive {
                try await connection.query("UPDATE api_keys SET revoked_at = now() WHERE id = \(id)", logger: logger)
                try await audit.record(
                    actor: admin.email, action: "api_keys.revoked",
                    details: ["id": id.uuidString.lowercased(), "name": found.name], on: connection)
            }
            return true
        }
    }

    /// Who a key acts for, with their roles now; nil for a key unknown, expired or revoked, or
    /// whose admin is disabled. Its use is recorded (`last_used_at`, and an audit event at most
    /// once a minute per key).
    package func identity(keyHash: String) async throws -> AdminIdentity? {
        var found: (key: UUID, name: String, identity: AdminIdentity)?
        for try await (keyId, name, adminId, email, role, studies, roles) in try await client.query(
            """
            SELECT k.id, k.name, a.id, a.email, a.role,
                   COALESCE(array_agg(r.study_id ORDER BY r.study_id) FILTER (WHERE r.study_id IS NOT NULL), '{}'),
                   COALESCE(array_agg(r.role ORDER BY r.study_id) FILTER (WHERE r.study_id IS NOT NULL), '{}')
            FROM api_keys k JOIN admins a ON a.id = k.admin_id
            LEFT JOIN study_roles r ON r.admin_id = a.id
            WHERE k.key_hash = \(keyHash) AND k.revoked_at IS NULL AND k.expires_at > now() AND a.disabled_at IS NULL
            GROUP BY k.id, k.name, a.id, a.email, a.role
            """, logger: logger
        ).decode((UUID, String, UUID, String, String, [String], [String]).self) {
            var studyRoles: [String: StudyRole] = [:]
            for (study, role) in zip(studies, roles) { studyRoles[study] = StudyRole(rawValue: role) }
            found = (keyId, name, AdminIdentity(
                adminId: adminId, email: email, role: AdminRole(rawValue: role) ?? .admin, studyRoles: studyRoles))
        }
        guard let found else { return nil }
        var due = false
        for try await _ in try await client.query(
            """
            UPDATE api_keys SET last_used_at = now()
            WHERE id = \(found.key)
              AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => \(Self.useAuditSeconds)))
            RETURNING id
            """, logger: logger
        ).decode(UUID.self) { due = true }
        if due {
            try await audit.record(
                actor: found.identity.email, action: "api_keys.used",
                details: ["id": found.key.uuidString.lowercased(), "name": found.name])
        }
        return found.identity
    }
}
