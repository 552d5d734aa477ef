import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Admin accounts, their sessions and invitations, and per-study roles.
package struct AdminStore: Sendable {
    package struct Account: Sendable {
        package var id: UUID
        package var email: String
        package var passwordHash: String?
        package var role: AdminRole
        package var disabled: Bool

        package init(id: UUID, email: String, passwordHash: String?, role: AdminRole, disabled: Bool) {
            self.id = id
            self.email = email
            self.passwordHash = passwordHash
            self.role = role
            self.disabled = disabled
        }
    }

    /// Tries before an account locks, and for how long (counted by ServiceKit's `AttemptCounter`).
    package static let lockout = AttemptCounter.Policy(maxAttempts: 5, lockFor: .seconds(15 * 60))

    package static func loginSubject(_ adminId: UUID) -> String { "admin.login:\(adminId.uuidString.lowercased())" }

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    package func account(email: String) async throws -> Account? {
        let rows = try await client.query(
            """
            SELECT id, email, password_hash, role, disabled_at IS NOT NULL
            FROM admins WHERE lower(email) = lower(\(email))
            """, logger: logger)
        for try await (id, email, hash, role, disabled) in rows.decode((UUID, String, String?, String, Bool).self) {
            return Account(
                id: id, email: email, passwordHash: hash, role: AdminRole(rawValue: role) ?? .admin, disabled: disabled)
        }
        return nil
    }

    /// Starts a session after a successful login.
    package func startSession(adminId: UUID, tokenHash: String, expiresAt: Date) async throws {
        try await client.query(
            "INSERT INTO admin_sessions (token_hash, admin_id, expires_at) VALUES (\(tokenHash), \(adminId), \(expiresAt))",
            logger: logger)
    }

    /// The admin holding a live session with this token hash.
    package func authenticated(tokenHash: String) async throws -> AuthenticatedAdmin? {
        // One round trip with the study roles: every admin API request starts here.
        let rows = try await client.query(
            """
            SELECT a.id, a.email, a.role,
                   COALESCE(array_agg(r.study_id ORDER BY r.study_id) FILTER (WHERE r.study_id IS NOT NULL), '{}'),
                   COALESCE(array_agg(r.role ORDER BY r.study_id) FILTER (WHERE r.study_id IS NOT NULL), '{}')
            FROM admin_sessions s JOIN admins a ON a.id = s.admin_id
            LEFT JOIN study_roles r ON r.admin_id = a.id
            WHERE s.token_hash = \(tokenHash) AND s.revoked_at IS NULL AND s.expires_at > now()
              AND a.disabled_at IS NULL
            GROUP BY a.id, a.email, a.role
            """, logger: logger)
        for try await (id, email, role, studies, roles) in rows.decode((UUID, String, String, [String], [String]).self) {
            var studyRoles: [String: StudyRole] = [:]
            for (study, role) in zip(studies, roles) { studyRoles[study] = StudyRole(rawValue: role) }
            return AuthenticatedAdmin(
                id: id, email: email, role: AdminRole(rawValue: role) ?? .admin, studyRoles: studyRoles, tokenHash: tokenHash)
        }
        return nil
    }

    package func revokeSession(tokenHash: String) async throws {
        try await client.query(
            "UPDATE admin_sessions SET revoked_at = now() WHERE token_hash = \(tokenHash) AND revoked_at IS NULL",
            logger: logger)
    }

    package func studyRoles(adminId: UUID) async throws -> [String: StudyRole] {
        let rows = try await client.query(
            "SELECT study_id, role FROM study_roles WHERE admin_id = \(adminId)", logger: logger)
        var roles: [String: StudyRole] = [:]
        for try await (study, role) in rows.decode((String, String).self) { roles[study] = StudyRole(rawValue: role) }
        return roles
    }

    package func superAdminExists() async throws -> Bool {
        let rows = try await client.query(
            "SELECT EXISTS (SELECT 1 FROM admins WHERE role = 'super_admin' AND disabled_at IS NULL)", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// Creates an account; nil when the e-mail is taken.
    package func createAdmin(email: String, role: AdminRole, passwordHash: String?) async throws -> UUID? {
        let id = UUID()
        let rows = try await client.query(
            """
            INSERT INTO admins (id, email, role, password_hash) VALUES (\(id), \(email), \(role.rawValue), \(passwordHash))
            ON CONFLICT ((lower(email))) DO NOTHING RETURNING id
            """, logger: logger)
        for try await created in rows.decode(UUID.self) { return created }
        return nil
    }

    package func createInvitation(adminId: UUID, tokenHash: String, expiresAt: Date) async throws {
        try await client.query(
            "INSERT INTO admin_invitations (token_hash, admin_id, expires_at) VALUES (\(tokenHash), \(adminId), \(expiresAt))",
            logger: logger)
    }

    /// Uses an invitation (once, before it expires) to set the account's password.
    /// Returns the account's e-mail, or nil when the invitation is unknown, used or expired.
    package func acceptInvitation(tokenHash: String, passwordHash: String) async throws -> String? {
        try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                UPDATE admin_invitations SET used_at = now()
                WHERE token_hash = \(tokenHash) AND used_at IS NULL AND expires_at > now()
                RETURNING admin_id
                """, logger: logger)
            var adminId: UUID?
            for try await id in rows.decode(UUID.self) { adminId = id }
            guard let adminId else { return nil }
            let updated = try await connection.query(
                "UPDATE admins SET password_hash = \(passwordHash) WHERE id = \(adminId) RETURNING email", logger: logger)
            for try await email in updated.decode(String.self) { return email }
            return nil
        }
    }

    package func list() async throws -> [AdminAccount] {
        let rows = try await client.query(
            """
            SELECT a.id, a.email, a.role, a.password_hash IS NOT NULL,
                   coalesce(json_object_agg(r.study_id, r.role) FILTER (WHERE r.study_id IS NOT NULL), '{}')::text
            FROM admins a LEFT JOIN study_roles r ON r.admin_id = a.id
            WHERE a.disabled_at IS NULL
            GROUP BY a.id ORDER BY lower(a.email)
            """, logger: logger)
        var admins: [AdminAccount] = []
        for try await (id, email, role, active, rolesJSON) in rows.decode((UUID, String, String, Bool, String).self) {
            let roles = (try? JSONDecoder().decode([String: StudyRole].self, from: Data(rolesJSON.utf8))) ?? [:]
            admins.append(AdminAccount(id: id, email: email, role: AdminRole(rawValue: role) ?? .admin, active: active, studyRoles: roles))
        }
        return admins
    }

    /// Who holds a role on `studyId`, by e-mail.
    package func team(studyId: String) async throws -> [StudyTeamMember] {
        let rows = try await client.query(
            """
            SELECT a.id, a.email, r.role FROM study_roles r JOIN admins a ON a.id = r.admin_id
            WHERE r.study_id = \(studyId) AND a.disabled_at IS NULL ORDER BY lower(a.email)
            """, logger: logger)
        var members: [StudyTeamMember] = []
        for try await (id, email, role) in rows.decode((UUID, String, String).self) {
            if let role = StudyRole(rawValue: role) { members.append(StudyTeamMember(adminId: id, email: email, role: role)) }
        }
        return members
    }

    /// The active account with this e-mail (whatever its case), if any.
    package func adminId(email: String) async throws -> UUID? {
        let rows = try await client.query(
            "SELECT id FROM admins WHERE lower(email) = lower(\(email)) AND disabled_at IS NULL", logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    package func exists(adminId: UUID) async throws -> Bool {
        let rows = try await client.query(
            "SELECT EXISTS (SELECT 1 FROM admins WHERE id = \(adminId) AND disabled_at IS NULL)", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// Grants `role` on the study spelled exactly `studyId`; false when there is no such study (a
    /// role on an id nobody created yet would hand its future creator's study to the grantee).
    package func grant(adminId: UUID, studyId: String, role: StudyRole) async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO study_roles (admin_id, study_id, role)
            SELECT \(adminId), study_id, \(role.rawValue) FROM studies WHERE study_id = \(studyId)
            ON CONFLICT (admin_id, study_id) DO UPDATE SET role = EXCLUDED.role, granted_at = now()
            RETURNING 1
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Removes a study role; false when there was none.
    package func revoke(adminId: UUID, studyId: String) async throws -> Bool {
        let rows = try await client.query(
            "DELETE FROM study_roles WHERE admin_id = \(adminId) AND study_id = \(studyId) RETURNING 1", logger: logger)
        for try await _ in rows { return true }
        return false
    }
}
