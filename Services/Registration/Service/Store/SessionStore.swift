import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Participant sessions, one per signed-in device. The `auth` key and the refresh token are
/// random 256-bit values stored only as SHA-256; the key expires after `accessDuration`, the
/// refresh token after `refreshDuration`, and each refresh replaces both. A refresh token that
/// was already exchanged and comes back means a copy leaked: that device's session is revoked.
struct SessionStore: Sendable {
    struct Issued: Sendable {
        var sessionId: UUID
        var auth: String
        var refreshToken: String
    }

    /// Who an `auth` key belongs to.
    struct Authenticated: Sendable {
        var sessionId: UUID
        var userId: UUID
        var appId: String
        var orgId: String
    }

    enum RefreshOutcome: Sendable {
        case refreshed(Issued, userId: UUID)
        /// Unknown, expired or revoked.
        case invalid
        /// A retired token came back; the session it belonged to is now revoked.
        case reused(userId: UUID)
    }

    let client: PostgresClient
    let accessDuration: Duration
    let refreshDuration: Duration
    let logger: Logger

    /// Opens a session for a device.
    func open(userId: UUID, now: Date, on connection: PostgresConnection) async throws -> Issued {
        let issued = Issued(sessionId: UUID(), auth: SecureToken.generate(), refreshToken: SecureToken.generate())
        try await connection.query(
            """
            INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at)
            VALUES (\(issued.sessionId), \(userId), \(SecureToken.hash(issued.auth)), \(now + accessDuration.timeInterval),
                    \(SecureToken.hash(issued.refreshToken)), \(now + refreshDuration.timeInterval))
            """, logger: logger)
        return issued
    }

    /// The session an unexpired, unrevoked `auth` key opens.
    func authenticate(auth: String, now: Date = Date()) async throws -> Authenticated? {
        let rows = try await client.query(
            """
            SELECT s.id, s.user_id, p.app_id, p.org_id FROM participant_sessions s
            JOIN participants p ON p.user_id = s.user_id
            WHERE s.auth_hash = \(SecureToken.hash(auth)) AND s.revoked_at IS NULL AND s.auth_expires_at > \(now)
            """, logger: logger)
        for try await (sessionId, userId, appId, orgId) in rows.decode((UUID, UUID, String, String).self) {
            return Authenticated(sessionId: sessionId, userId: userId, appId: appId, orgId: orgId)
        }
        return nil
    }

    /// Exchanges a refresh token for a new key and a new refresh token, within the app.
    func refresh(token: String, appId: String, orgId: String, now: Date) async throws -> RefreshOutcome {
        let hash = SecureToken.hash(token)
        return try await client.withTransaction(logger: logger) { connection -> RefreshOutcome in
            let current = try await connection.query(
                """
                SELECT s.id, s.user_id FROM participant_sessions s JOIN participants p ON p.user_id = s.user_id
                WHERE s.refresh_hash = \(hash) AND s.revoked_at IS NULL AND s.refresh_expires_at > \(now)
                  AND p.app_id = \(appId) AND p.org_id = \(orgId)
                FOR UPDATE OF s
                """, logger: logger)
            for try await (sessionId, userId) in current.decode((UUID, UUID).self) {
                let issued = Issued(sessionId: sessionId, auth: SecureToken.generate(), refreshToken: SecureToken.generate())
                try await connection.query(
                    "INSERT INTO retired_refresh_tokens (refresh_hash, session_id) VALUES (\(hash), \(sessionId))",
                    logger: logger)
                try await connection.query(
                    """
                    UPDATE participant_sessions SET auth_hash = \(SecureToken.hash(issued.auth)),
                        auth_expires_at = \(now + accessDuration.timeInterval),
                        refresh_hash = \(SecureToken.hash(issued.refreshToken)),
                        refresh_expires_at = \(now + refreshDuration.timeInterval), last_used_at = \(now)
                    WHERE id = \(sessionId)
                    """, logger: logger)
                return .refreshed(issued, userId: userId)
            }
            let retired = try await connection.query(
                """
                UPDATE participant_sessions s SET revoked_at = coalesce(s.revoked_at, \(now)),
                    revoked_reason = coalesce(s.revoked_reason, 'refresh token reused')
                FROM retired_refresh_tokens r
                WHERE r.refresh_hash = \(hash) AND s.id = r.session_id
                RETURNING s.user_id
                """, logger: logger)
            for try await userId in retired.decode(UUID.self) { return .reused(userId: userId) }
            return .invalid
        }
    }

    func revoke(sessionId: UUID, reason: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participant_sessions SET revoked_at = now(), revoked_reason = \(reason), device_token = NULL
            WHERE id = \(sessionId) AND revoked_at IS NULL
            """, logger: logger)
    }

    /// Every session of the user (a password change signs out the other devices).
    func revokeAll(userId: UUID, except keep: UUID? = nil, reason: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participant_sessions SET revoked_at = now(), revoked_reason = \(reason), device_token = NULL
            WHERE user_id = \(userId) AND revoked_at IS NULL AND id IS DISTINCT FROM \(keep)
            """, logger: logger)
    }
}

extension Duration {
    var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
