import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Participant sessions, one per signed-in device. The `auth` key and the refresh token are
/// random 256-bit values stored only as SHA-256; the key expires after `accessDuration`, the
/// refresh token after `refreshDuration`, and each refresh replaces both. A refresh token that
/// was already exchanged and comes back without the session's newest key means a copy leaked:
/// that device's session is revoked (see `refresh`).
package struct SessionStore: Sendable {
    package struct Issued: Sendable {
        package var sessionId: UUID
        package var auth: String
        package var refreshToken: String

        package init(sessionId: UUID, auth: String, refreshToken: String) {
            self.sessionId = sessionId
            self.auth = auth
            self.refreshToken = refreshToken
        }
    }

    /// Who an `auth` key belongs to.
    package struct Authenticated: Sendable {
        package var sessionId: UUID
        package var userId: UUID
        package var appId: String
        package var orgId: String

        package init(sessionId: UUID, userId: UUID, appId: String, orgId: String) {
            self.sessionId = sessionId
            self.userId = userId
            self.appId = appId
            self.orgId = orgId
        }
    }

    package enum RefreshOutcome: Sendable {
        case refreshed(Issued, userId: UUID)
        /// Unknown, expired or revoked.
        case invalid
        /// A retired token came back; the session it belonged to is now revoked.
        case reused(userId: UUID)
    }

    package let client: PostgresClient
    /// Whether a pooler in transaction mode stands between: no named prepared statements then.
    package let pooling: DatabaseSettings.Pooling
    package let accessDuration: Duration
    package let refreshDuration: Duration
    package let logger: Logger
    /// Every participant call looks its session up: lookups that arrive while one is in flight
    /// are made together, in one statement and one round trip.
    private let lookups: GroupCommit<AuthenticateBatchStatement.Item, Authenticated?>

    package init(
        client: PostgresClient, accessDuration: Duration, refreshDuration: Duration, pooling: DatabaseSettings.Pooling = .session,
        logger: Logger
    ) {
        self.client = client
        self.pooling = pooling
        self.accessDuration = accessDuration
        self.refreshDuration = refreshDuration
        self.logger = logger
        lookups = GroupCommit(maxBatch: 256, maxInFlight: 2, logger: logger) { items in
            var found: [Int: Authenticated] = [:]
            for try await (position, sessionId, userId, appId, orgId) in try await client.run(
                AuthenticateBatchStatement(items: items), pooling: pooling, logger: logger)
            {
                found[position - 1] = Authenticated(sessionId: sessionId, userId: userId, appId: appId, orgId: orgId)
            }
            return items.indices.map { .success(found[$0]) }
        }
    }

    /// Opens a session for a device; `temporaryPassword` (hash and expiry) when it was opened
    /// with one, which `changePassword` on this session then accepts as the current password.
    package func open(
        userId: UUID, now: Date, temporaryPassword: (hash: String, expiresAt: Date)? = nil, on connection: PostgresConnection
    ) async throws -> Issued {
        let issued = Issued(sessionId: UUID(), auth: SecureToken.generate(), refreshToken: SecureToken.generate())
        try await connection.query(
            """
            INSERT INTO participant_sessions (id, user_id, auth_hash, auth_expires_at, refresh_hash, refresh_expires_at,
                                              temp_password_hash, temp_password_expires_at)
            VALUES (\(issued.sessionId), \(userId), \(SecureToken.hash(issued.auth)), \(now + accessDuration.timeInterval),
                    \(SecureToken.hash(issued.refreshToken)), \(now + refreshDuration.timeInterval),
                    \(temporaryPassword?.hash), \(temporaryPassword?.expiresAt))
            """, logger: logger)
        return issued
    }

    /// A changed password makes the temporary one every session signed in with worthless.
    package func forgetTemporaryPasswords(userId: UUID, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participant_sessions SET temp_password_hash = NULL, temp_password_expires_at = NULL
            WHERE user_id = \(userId) AND temp_password_hash IS NOT NULL
            """, logger: logger)
    }

    /// The temporary password a session was opened with, while it is valid.
    package func temporaryPasswordHash(sessionId: UUID, now: Date) async throws -> String? {
        let rows = try await client.query(
            """
            SELECT temp_password_hash FROM participant_sessions
            WHERE id = \(sessionId) AND temp_password_expires_at > \(now)
            """, logger: logger)
        for try await hash in rows.decode(String?.self) { return hash }
        return nil
    }

    /// The session an unexpired, unrevoked `auth` key opens.
    package func authenticate(auth: String, now: Date = Date()) async throws -> Authenticated? {
        try await lookups.submit(.init(authHash: SecureToken.hash(auth), now: now))
    }

    /// The session lookup of every participant call, for a batch of calls (`lookups`): each
    /// key's session if it is current and its account enabled, by the key's position. Prepared
    /// once per connection.
    package struct AuthenticateBatchStatement: PostgresPreparedStatement {
        package struct Item: Sendable {
            package var authHash: String
            package var now: Date
        }

        package static let sql = """
            SELECT x.n::int8, s.id, s.user_id, p.app_id, p.org_id
            FROM unnest($1::text[], $2::timestamptz[]) WITH ORDINALITY AS x(auth_hash, now, n)
            JOIN participant_sessions s ON s.auth_hash = x.auth_hash AND s.revoked_at IS NULL AND s.auth_expires_at > x.now
            JOIN participants p ON p.user_id = s.user_id AND p.disabled_at IS NULL
            """
        package static let bindingDataTypes: [PostgresDataType] = [.textArray, .timestamptzArray]
        package typealias Row = (Int, UUID, UUID, String, String)

        package var items: [Item]

        package func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(items.map(\.authHash))
            bindings.append(items.map(\.now))
            return bindings
        }

        package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Exchanges a refresh token for a new key and a new refresh token, within the app.
    ///
    /// The session's current refresh token is always accepted. A token that was already exchanged
    /// is accepted only together with the session's newest `auth` key (expired or not), which
    /// only the device that received the last exchange holds: the 2019-2020 iOS apps keep their
    /// first refresh token and send it again with the key the last refresh gave them, while a
    /// copy of an old token without that key is what a leak looks like, and revokes the session.
    package func refresh(token: String, auth presentedAuth: String?, appId: String, orgId: String, now: Date) async throws
        -> RefreshOutcome
    {
        let hash = SecureToken.hash(token)
        let authHash = presentedAuth.map(SecureToken.hash)
        return try await client.withTransaction(logger: logger) { connection -> RefreshOutcome in
            let usable = try await connection.query(
                """
                SELECT s.id, s.user_id, s.refresh_hash FROM participant_sessions s
                JOIN participants p ON p.user_id = s.user_id
                LEFT JOIN retired_refresh_tokens r ON r.session_id = s.id AND r.refresh_hash = \(hash)
                WHERE s.revoked_at IS NULL AND s.refresh_expires_at > \(now)
                  AND p.app_id = \(appId) AND p.org_id = \(orgId) AND p.disabled_at IS NULL
                  AND (s.refresh_hash = \(hash) OR (r.refresh_hash IS NOT NULL AND s.auth_hash = \(authHash)))
                FOR UPDATE OF s
                """, logger: logger)
            for try await (sessionId, userId, currentHash) in usable.decode((UUID, UUID, String).self) {
                let issued = Issued(sessionId: sessionId, auth: SecureToken.generate(), refreshToken: SecureToken.generate())
                try await connection.query(
                    """
                    INSERT INTO retired_refresh_tokens (refresh_hash, session_id) VALUES (\(currentHash), \(sessionId))
                    ON CONFLICT (refresh_hash) DO NOTHING
                    """, logger: logger)
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
                    revoked_reason = coalesce(s.revoked_reason, 'refresh token reused'), device_token = NULL
                FROM retired_refresh_tokens r
                WHERE r.refresh_hash = \(hash) AND s.id = r.session_id
                RETURNING s.user_id
                """, logger: logger)
            for try await userId in retired.decode(UUID.self) { return .reused(userId: userId) }
            return .invalid
        }
    }

    package func revoke(sessionId: UUID, reason: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participant_sessions SET revoked_at = now(), revoked_reason = \(reason), device_token = NULL
            WHERE id = \(sessionId) AND revoked_at IS NULL
            """, logger: logger)
    }

    /// Every session of the user (a password change signs out the other devices).
    package func revokeAll(userId: UUID, except keep: UUID? = nil, reason: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE participant_sessions SET revoked_at = now(), revoked_reason = \(reason), device_token = NULL
            WHERE user_id = \(userId) AND revoked_at IS NULL AND id IS DISTINCT FROM \(keep)
            """, logger: logger)
    }
}

extension Duration {
    package var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
