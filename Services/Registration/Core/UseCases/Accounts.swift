import Foundation
import ServiceKit
import StudyModels

/// The account rules: registration, verification, sign-in with lockout and password expiry,
/// refresh, password help and changes. Each state change commits in one unit of work with its
/// audit event and any e-mail it sends; a refusal thrown inside one leaves nothing behind.
package struct Accounts: Sendable {
    /// Every change, in one transaction each.
    package let transactions: any Transactions<any AccountWork>
    package let participants: any AccountLookup
    package let sessions: any SessionRefresh
    /// The apps study-metadata has sent: an account belongs to one of them.
    package let apps: any AppDirectory
    package let secrets: OneTimeSecrets
    package let hasher: PasswordHasher
    /// Tries at a participant's password, code or current password, counted before they are checked.
    package let attempts: any SecretAttempts
    package let audit: any AuditTrail
    package let settings: RegistrationSettings

    package init(
        transactions: any Transactions<any AccountWork>, participants: any AccountLookup, sessions: any SessionRefresh,
        apps: any AppDirectory, secrets: OneTimeSecrets, hasher: PasswordHasher, attempts: any SecretAttempts,
        audit: any AuditTrail, settings: RegistrationSettings
    ) {
        self.transactions = transactions
        self.participants = participants
        self.sessions = sessions
        self.apps = apps
        self.secrets = secrets
        self.hasher = hasher
        self.attempts = attempts
        self.audit = audit
        self.settings = settings
    }

    // MARK: - Registration and verification

    package func register(email: String, password: String, appId: String, orgId: String, now: Date = Date()) async throws -> SessionReply {
        guard EmailAddress.isPlausible(email.trimmingCharacters(in: .whitespaces)) else {
            throw RegistrationError.invalid("Please enter a valid email address.")
        }
        if let problem = PasswordPolicy.problem(with: password) { throw RegistrationError.invalid(problem) }
        // The original answered only for the app folder the headers named; an account under an
        // app nobody created would be a session with nothing to belong to.
        guard try await apps.app(appId: appId, orgId: orgId) != nil else {
            throw RegistrationError.invalid("Unknown app: check the applicationId and orgId headers.")
        }
        let passwordHash = try await hasher.hash(password)
        let userId = UUID()
        let code = OneTimeSecrets.makeCode()
        let email = email.trimmingCharacters(in: .whitespaces)
        let reply = try await transactions.run { work -> SessionReply? in
            guard try await work.create(
                userId: userId, appId: appId, orgId: orgId, email: email, passwordHash: passwordHash,
                codeHash: secrets.hash(code: code, userId: userId), codeExpiresAt: now + settings.codeDuration.timeInterval)
            else { return nil }
            let issued = try await work.openSession(userId: userId, now: now, temporaryPassword: nil)
            try await sendMail(.verification, token: code, to: email, appId: appId, orgId: orgId, in: work)
            try await work.record(
                actor: userId.uuidString.lowercased(), action: "participant.registered", details: ["appId": appId, "orgId": orgId])
            return SessionReply(
                userId: userId.uuidString.lowercased(), verified: false, auth: issued.auth, refreshToken: issued.refreshToken)
        }
        guard let reply else {
            throw RegistrationError.invalid("This email has already been used. Please try with different email address.")
        }
        return reply
    }

    package func verify(email: String, code: String, appId: String, orgId: String, now: Date = Date()) async throws {
        guard let account = try await participants.find(appId: appId, orgId: orgId, email: email) else {
            throw RegistrationError.invalid("Invalid code")
        }
        if account.verified { throw RegistrationError.alreadyVerified }
        // A code is six characters: without a count, it could be guessed in a few thousand calls.
        let subject = Self.codeSubject(account.userId)
        if case .locked = try await attempts.begin(subject, policy: lockout) {
            throw RegistrationError.locked(minutes: lockMinutes)
        }
        try await transactions.run { work in
            guard let locked = try await work.lock(userId: account.userId) else {
                throw RegistrationError.invalid("Invalid code")
            }
            if locked.verified { throw RegistrationError.alreadyVerified }
            guard let stored = locked.codeHash, stored == secrets.hash(code: code, userId: locked.userId) else {
                throw RegistrationError.invalid("Invalid code")
            }
            if locked.disabledAt != nil { throw RegistrationError.disabled }
            try await work.attemptsSucceeded(subject)
            guard let expires = locked.codeExpiresAt, expires > now else { throw RegistrationError.codeExpired }
            try await work.markVerified(userId: locked.userId)
            try await work.record(actor: locked.userId.uuidString.lowercased(), action: "participant.verified", details: [:])
        }
    }

    /// A new code for an unverified account. An unknown address answers the same as a known one,
    /// so the call cannot be used to learn who has an account.
    package func resendCode(email: String, appId: String, orgId: String, now: Date = Date()) async throws {
        guard let account = try await participants.find(appId: appId, orgId: orgId, email: email), account.disabledAt == nil
        else { return }
        if account.verified { throw RegistrationError.alreadyVerified }
        try await sendNewCode(to: account, actor: account.userId.uuidString.lowercased(), now: now)
    }

    /// Replaces the account's verification code with a new one and e-mails it, with the audit
    /// event naming `actor` (the participant, or the admin who asked for it).
    package func sendNewCode(to account: Participant, actor: String, now: Date = Date()) async throws {
        let code = OneTimeSecrets.makeCode()
        try await transactions.run { work in
            try await work.setCode(
                userId: account.userId, hash: secrets.hash(code: code, userId: account.userId),
                expiresAt: now + settings.codeDuration.timeInterval)
            try await sendMail(
                .verification, token: code, to: account.email, appId: account.appId, orgId: account.orgId, in: work)
            try await work.record(
                actor: actor, action: "participant.code_resent", details: ["userId": account.userId.uuidString.lowercased()])
        }
    }

    // MARK: - Sign-in

    package func login(email: String, password: String, appId: String, orgId: String, now: Date = Date()) async throws -> SessionReply {
        guard let account = try await participants.find(appId: appId, orgId: orgId, email: email) else {
            // As slow as a wrong password, so timing does not tell which accounts exist.
            _ = try await hasher.verify(password, hash: PasswordHasher.decoyHash)
            throw RegistrationError.wrongCredentials
        }
        let actor = account.userId.uuidString.lowercased()
        // Counted before the hash: concurrent guesses each take a try, so no burst checks more
        // than the policy's number of passwords.
        let subject = Self.loginSubject(account.userId)
        guard case .allowed(let isLast) = try await attempts.begin(subject, policy: lockout) else {
            throw RegistrationError.locked(minutes: lockMinutes)
        }
        let matchesPassword = try await hasher.verify(password, hash: account.passwordHash)
        var usedTemporary = false
        if !matchesPassword, let temporary = account.tempPasswordHash, let expires = account.tempPasswordExpiresAt, expires > now {
            usedTemporary = try await hasher.verify(password, hash: temporary)
        }
        guard matchesPassword || usedTemporary else {
            try await audit.record(actor: actor, action: isLast ? "participant.locked" : "participant.login_failed")
            try await sendMovedInReset(to: account, now: now)
            throw isLast ? RegistrationError.locked(minutes: lockMinutes) : RegistrationError.wrongCredentials
        }
        // Said only to whoever knows the password, so it does not tell others the account exists.
        if account.disabledAt != nil {
            try await audit.record(actor: actor, action: "participant.login_refused", details: ["reason": "disabled"])
            throw RegistrationError.disabled
        }
        let expired = now.timeIntervalSince(account.passwordChangedAt) > settings.passwordExpiry.timeInterval
        // A hash carried over from another platform is replaced by this one's at the first
        // sign-in that matches it (docs/security.md, Passwords).
        let rehashed = matchesPassword && PasswordHasher.isCarriedOver(account.passwordHash) ? try await hasher.hash(password) : nil
        return try await transactions.run { work in
            if let rehashed {
                try await work.rehashPassword(userId: account.userId, from: account.passwordHash, to: rehashed)
                try await work.record(actor: actor, action: "participant.password_rehashed", details: ["from": "mystudies-sha512"])
            }
            try await work.recordLogin(userId: account.userId, usedTemporaryPassword: usedTemporary)
            try await work.attemptsSucceeded(subject)
            let temporary = usedTemporary ? account.tempPasswordHash.flatMap { hash in
                account.tempPasswordExpiresAt.map { (hash: hash, expiresAt: $0) }
            } : nil
            let issued = try await work.openSession(userId: account.userId, now: now, temporaryPassword: temporary)
            try await work.record(
                actor: actor, action: "participant.login", details: usedTemporary ? ["with": "temporary password"] : [:])
            return SessionReply(
                userId: actor, verified: account.verified, auth: issued.auth, refreshToken: issued.refreshToken,
                resetPassword: usedTemporary || expired)
        }
    }

    /// An account moved in without a password this platform can check (docs/moving-in.md) is
    /// e-mailed a temporary password at its first sign-in attempt, and again only once that one
    /// has expired. The attempt is answered as a wrong password, as for any other address, so
    /// the answer does not tell which accounts were moved in.
    private func sendMovedInReset(to account: Participant, now: Date) async throws {
        guard PasswordHasher.needsReset(account.passwordHash), account.disabledAt == nil else { return }
        if let expires = account.tempPasswordExpiresAt, expires > now { return }
        let temporary = OneTimeSecrets.makeTemporaryPassword()
        let hash = try await hasher.hash(temporary)
        try await transactions.run { work in
            try await work.setTemporaryPassword(userId: account.userId, hash: hash, expiresAt: now + settings.codeDuration.timeInterval)
            try await sendMail(.passwordHelp, token: temporary, to: account.email, appId: account.appId, orgId: account.orgId, in: work)
            try await work.record(
                actor: account.userId.uuidString.lowercased(), action: "participant.password_help_sent", details: ["reason": "moved in"])
        }
    }

    package func refresh(token: String, auth: String?, appId: String, orgId: String, now: Date = Date()) async throws -> SessionReply {
        switch try await sessions.refresh(token: token, auth: auth, appId: appId, orgId: orgId, now: now) {
        case .refreshed(let issued, let userId):
            let verified = try await participants.find(userId: userId)?.verified ?? false
            return SessionReply(
                userId: userId.uuidString.lowercased(), verified: verified, auth: issued.auth, refreshToken: issued.refreshToken)
        case .reused(let userId):
            try await audit.record(actor: userId.uuidString.lowercased(), action: "participant.refresh_token_reused")
            throw RegistrationError.invalidRefreshToken
        case .invalid:
            throw RegistrationError.invalidRefreshToken
        }
    }

    package func logout(_ session: SessionStore.Authenticated) async throws {
        try await transactions.run { work in
            try await work.revokeSession(sessionId: session.sessionId, reason: "logout")
            try await work.record(actor: session.userId.uuidString.lowercased(), action: "participant.logout", details: [:])
        }
    }

    // MARK: - Passwords

    /// E-mails a temporary password to a verified account. Unknown addresses answer as known ones;
    /// an unverified account gets 403 (the app then opens its verification screen).
    package func forgotPassword(email: String, appId: String, orgId: String, now: Date = Date()) async throws {
        guard let account = try await participants.find(appId: appId, orgId: orgId, email: email), account.disabledAt == nil
        else { return }
        guard account.verified else { throw RegistrationError.notVerified }
        // A reset neither unlocks the account nor clears its count of failed sign-ins: a reset
        // between guesses would otherwise make the lockout endless guessing.
        if try await attempts.lockedUntil(Self.loginSubject(account.userId)) != nil {
            throw RegistrationError.locked(minutes: lockMinutes)
        }
        let temporary = OneTimeSecrets.makeTemporaryPassword()
        let hash = try await hasher.hash(temporary)
        try await transactions.run { work in
            try await work.setTemporaryPassword(
                userId: account.userId, hash: hash, expiresAt: now + settings.codeDuration.timeInterval)
            try await sendMail(.passwordHelp, token: temporary, to: account.email, appId: appId, orgId: orgId, in: work)
            try await work.record(
                actor: account.userId.uuidString.lowercased(), action: "participant.password_help_sent", details: [:])
        }
    }

    /// Accepts the current or a valid temporary password; refuses the policy's failures and any
    /// of the last `passwordHistory` passwords; signs out the user's other devices.
    package func changePassword(
        _ session: SessionStore.Authenticated, current: String, new: String, now: Date = Date()
    ) async throws {
        if let problem = PasswordPolicy.problem(with: new) { throw RegistrationError.invalid(problem) }
        guard let account = try await participants.find(userId: session.userId) else { throw RegistrationError.sessionExpired }
        // A stolen session must not become a password oracle: tries at the current password are
        // counted like sign-ins.
        let subject = Self.passwordSubject(account.userId)
        if case .locked = try await attempts.begin(subject, policy: lockout) {
            throw RegistrationError.locked(minutes: lockMinutes)
        }
        var currentMatches = try await hasher.verify(current, hash: account.passwordHash)
        if !currentMatches, let temporary = account.tempPasswordHash, let expires = account.tempPasswordExpiresAt, expires > now {
            currentMatches = try await hasher.verify(current, hash: temporary)
        }
        // The temporary password this session signed in with (the apps' change-password screen
        // sends it as the current one).
        if !currentMatches, let temporary = try await sessions.temporaryPasswordHash(sessionId: session.sessionId, now: now) {
            currentMatches = try await hasher.verify(current, hash: temporary)
        }
        guard currentMatches else { throw RegistrationError.invalid("Current password is invalid.") }
        try await attempts.succeeded(subject)
        let newHash = try await hasher.hash(new)
        try await transactions.run { work in
            for old in try await work.recentPasswordHashes(userId: account.userId, count: settings.passwordHistory)
            where try await hasher.verify(new, hash: old) {
                throw RegistrationError.invalid(
                    "The new password must differ from your last \(settings.passwordHistory) passwords.")
            }
            try await work.changePassword(userId: account.userId, hash: newHash, keep: settings.passwordHistory)
            try await work.revokeSessions(userId: account.userId, except: session.sessionId, reason: "password changed")
            try await work.forgetTemporaryPasswords(userId: account.userId)
            try await work.record(
                actor: account.userId.uuidString.lowercased(), action: "participant.password_changed", details: [:])
        }
    }

    // MARK: - Helpers

    private var lockout: AttemptCounter.Policy {
        AttemptCounter.Policy(maxAttempts: settings.maxFailedLogins, lockFor: settings.lockDuration)
    }

    private var lockMinutes: Int { Int(settings.lockDuration.components.seconds / 60) }

    /// Failed sign-ins are counted under this prefix and the account id (the admin API reads it too).
    package static let loginSubjectPrefix = "participant.login:"
    package static func loginSubject(_ userId: UUID) -> String { loginSubjectPrefix + userId.uuidString.lowercased() }
    package static func codeSubject(_ userId: UUID) -> String { "participant.code:\(userId.uuidString.lowercased())" }
    package static func passwordSubject(_ userId: UUID) -> String { "participant.password:\(userId.uuidString.lowercased())" }

    private func sendMail(
        _ kind: MailKind, token: String, to recipient: String, appId: String, orgId: String, in work: any AccountWork
    ) async throws {
        guard MailMessage.isSingleLine(recipient) else { throw RegistrationError.invalid("Please enter a valid email address.") }
        let choice = MailTemplates.choice(kind, app: try await work.app(appId: appId, orgId: orgId), defaultFrom: settings.mailFrom)
        try await work.enqueue(choice.template.render(token: token, from: choice.from, to: recipient), kind: kind, appId: appId)
    }
}
