import Foundation
import ServiceKit
import StudyModels

/// An admin's sign-in, sign-out and first password. Sign-in answers the same for an unknown
/// e-mail, a disabled account and a wrong password (and spends the same bcrypt time on each),
/// and counts each try before its hash is checked, so a burst of guesses sent together is held
/// to the lockout's allowance.
package struct AdminSessions: Sendable {
    package let store: any AdminAccounts
    package let hasher: PasswordHasher
    package let attempts: any SecretAttempts
    package let audit: any AuditTrail
    package let settings: AdminSettings

    package init(
        store: any AdminAccounts, hasher: PasswordHasher, attempts: any SecretAttempts, audit: any AuditTrail, settings: AdminSettings
    ) {
        self.store = store
        self.hasher = hasher
        self.attempts = attempts
        self.audit = audit
        self.settings = settings
    }

    /// A new session for `email`'s account, its token shown this once and stored hashed.
    package func signIn(email: String, password: String, now: Date = Date()) async throws -> AdminSignedIn {
        guard let account = try await store.account(email: email), !account.disabled, let hash = account.passwordHash else {
            _ = try await hasher.verify(password, hash: PasswordHasher.decoyHash)
            try await audit.record(actor: email, action: "admin.login_failed", details: ["reason": "unknown account"])
            throw StudyMetadataError.wrongCredentials
        }
        let subject = AdminStore.loginSubject(account.id)
        let isLast: Bool
        switch try await attempts.begin(subject, policy: AdminStore.lockout) {
        case .locked(let lockedUntil):
            try await audit.record(actor: account.email, action: "admin.login_refused", details: ["reason": "locked"])
            throw StudyMetadataError.locked(until: lockedUntil)
        case .allowed(let last):
            isLast = last
        }
        guard try await hasher.verify(password, hash: hash) else {
            try await audit.record(
                actor: account.email, action: "admin.login_failed",
                details: isLast ? ["reason": "wrong password", "locked": "true"] : ["reason": "wrong password"])
            throw StudyMetadataError.wrongCredentials
        }
        try await attempts.succeeded(subject)
        let token = SecureToken.generate()
        let expiresAt = now.addingTimeInterval(TimeInterval(settings.sessionDuration.components.seconds))
        try await store.startSession(adminId: account.id, tokenHash: SecureToken.hash(token), expiresAt: expiresAt)
        try await audit.record(actor: account.email, action: "admin.login")
        let roles = try await store.studyRoles(adminId: account.id)
        return AdminSignedIn(
            token: token, expiresAt: expiresAt,
            admin: AdminProfile(id: account.id, email: account.email, role: account.role, studyRoles: roles))
    }

    /// Ends the session `admin` signed in with.
    package func signOut(_ admin: AuthenticatedAdmin) async throws {
        try await store.revokeSession(tokenHash: admin.tokenHash)
        try await audit.record(actor: admin.email, action: "admin.logout")
    }

    /// Sets the invited admin's first password; answers their e-mail address.
    package func acceptInvitation(token: String, password: String) async throws -> String {
        if let problem = PasswordPolicy.problem(with: password) { throw StudyMetadataError.weakPassword(problem) }
        let hash = try await hasher.hash(password)
        guard let email = try await store.acceptInvitation(tokenHash: SecureToken.hash(token), passwordHash: hash) else {
            throw StudyMetadataError.invitationInvalid
        }
        try await audit.record(actor: email, action: "admin.invitation_accepted")
        return email
    }
}
