import Configuration
import Foundation
import InMemoryPorts
import RegistrationCore
import ServiceKit
import StudyModels
import Synchronization
import Testing

/// The account rules (`Accounts`, `AccountAdministration`) against in-memory accounts: sign-up,
/// the e-mailed code, sign-in with its lockout, temporary passwords, password changes and their
/// history, refresh tokens, and what an admin may do to an account. Every refusal is checked to
/// leave nothing behind (the unit of work rolls back).
@Suite struct AccountRulesTests {
    /// A clock the tests move.
    final class Clock: Sendable {
        private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { current.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { current.withLock { $0 += seconds } }
    }

    struct Fixture {
        let clock = Clock()
        let store: InMemoryAccounts
        let accounts: Accounts

        init() throws {
            let clock = clock
            store = InMemoryAccounts(
                apps: [AppDefinition(appId: "APP", orgId: "ORG", name: "Sleep", kind: .standalone)], now: { clock.now })
            var values: [AbsoluteConfigKey: ConfigValue] = [:]
            values[AbsoluteConfigKey(ConfigKey("studystack.encryptionKey"))] =
                .init(.string(Data(repeating: 9, count: 32).base64EncodedString()), isSecret: true)
            let settings = try RegistrationSettings(reader: ConfigReader(provider: InMemoryProvider(values: values)))
            accounts = Accounts(
                transactions: store, participants: store, sessions: store, apps: store,
                secrets: OneTimeSecrets(encryptionKey: settings.encryptionKey), hasher: PasswordHasher(cost: 4), attempts: store,
                audit: store, settings: settings)
        }

        var now: Date { clock.now }

        /// The token the newest e-mail to `email` carries (the code, or the temporary password).
        func mailedToken(to email: String) throws -> String {
            let mail = try #require(store.state.mail.last { $0.message.to == email })
            let match = try #require(mail.message.text.firstMatch(of: /is ([A-Za-z0-9]+)\./))
            return String(match.1)
        }

        @discardableResult
        func register(_ email: String = "ana@example.org", password: String = "Sleep-well-1") async throws -> SessionReply {
            try await accounts.register(email: email, password: password, appId: "APP", orgId: "ORG", now: now)
        }

        /// A verified account signed in once: its session.
        func verifiedAccount(_ email: String = "ana@example.org", password: String = "Sleep-well-1") async throws
            -> SessionStore.Authenticated
        {
            try await register(email, password: password)
            try await accounts.verify(email: email, code: try mailedToken(to: email), appId: "APP", orgId: "ORG", now: now)
            return try await signIn(email, password: password)
        }

        func signIn(_ email: String = "ana@example.org", password: String = "Sleep-well-1") async throws -> SessionStore.Authenticated {
            let reply = try await accounts.login(email: email, password: password, appId: "APP", orgId: "ORG", now: now)
            return try #require(store.authenticate(auth: reply.auth))
        }
    }

    static func refusal(_ body: () async throws -> Void) async -> RegistrationError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? RegistrationError
        }
    }

    // MARK: Registration and the code

    @Test func signingUpMakesAnUnverifiedAccountAndMailsItsCode() async throws {
        let fixture = try Fixture()
        let reply = try await fixture.register()
        #expect(reply.verified == false)
        #expect(fixture.store.authenticate(auth: reply.auth)?.userId.uuidString.lowercased() == reply.userId)
        let state = fixture.store.state
        #expect(state.participants.count == 1)
        #expect(state.mail.count == 1)
        #expect(state.mail.first?.kind == .verification)
        #expect(state.mail.first?.message.to == "ana@example.org")
        #expect(fixture.store.actions == ["participant.registered"])
        // The code is kept only as its keyed hash.
        let code = try fixture.mailedToken(to: "ana@example.org")
        #expect(code.count == 6)
        #expect(state.participants.values.first?.codeHash != code)
    }

    @Test func theSameAddressInAnotherCaseIsRefusedAndNothingIsAdded() async throws {
        let fixture = try Fixture()
        try await fixture.register()
        let refused = await Self.refusal { try await fixture.register(" ANA@Example.org") }
        #expect(refused == .invalid("This email has already been used. Please try with different email address."))
        #expect(fixture.store.state.participants.count == 1)
        #expect(fixture.store.state.mail.count == 1)
        #expect(fixture.store.state.sessions.count == 1)
        #expect(fixture.store.actions == ["participant.registered"])
    }

    @Test func aSignUpTheRulesRefuseChangesNothing() async throws {
        let fixture = try Fixture()
        #expect(await Self.refusal { try await fixture.register("not an address") } == .invalid("Please enter a valid email address."))
        #expect(await Self.refusal { try await fixture.register(password: "short") } == .invalid(PasswordPolicy.description))
        let unknownApp = await Self.refusal {
            _ = try await fixture.accounts.register(email: "b@example.org", password: "Sleep-well-1", appId: "OTHER", orgId: "ORG")
        }
        #expect(unknownApp == .invalid("Unknown app: check the applicationId and orgId headers."))
        #expect(await Self.refusal { try await fixture.register("ana@example.org\r\nBcc: x@example.org") } != nil)
        let state = fixture.store.state
        #expect(state.participants.isEmpty)
        #expect(state.sessions.isEmpty)
        #expect(state.mail.isEmpty)
        #expect(state.events.isEmpty)
    }

    @Test func theMailedCodeVerifiesOnceInAnyCase() async throws {
        let fixture = try Fixture()
        try await fixture.register()
        let code = try fixture.mailedToken(to: "ana@example.org")
        let verify = { (code: String) in
            try await fixture.accounts.verify(email: "ana@example.org", code: code, appId: "APP", orgId: "ORG", now: fixture.now)
        }
        #expect(await Self.refusal { try await verify("AAAAAA") } == .invalid("Invalid code"))
        try await verify(code.lowercased())
        #expect(fixture.store.state.participants.values.first?.verified == true)
        #expect(fixture.store.state.participants.values.first?.codeHash == nil, "the code is spent")
        #expect(await Self.refusal { try await verify(code) } == .alreadyVerified)
        #expect(fixture.store.actions == ["participant.registered", "participant.verified"])
    }

    /// The right code after its 48 hours: refused, and the success that forgot the tries at the
    /// code is rolled back with it.
    @Test func anExpiredCodeVerifiesNothing() async throws {
        let fixture = try Fixture()
        try await fixture.register()
        let code = try fixture.mailedToken(to: "ana@example.org")
        fixture.clock.advance(49 * 3600)
        let refused = await Self.refusal {
            try await fixture.accounts.verify(email: "ana@example.org", code: code, appId: "APP", orgId: "ORG", now: fixture.now)
        }
        #expect(refused == .codeExpired)
        #expect(fixture.store.state.participants.values.first?.verified == false)
        #expect(!fixture.store.actions.contains("participant.verified"))
        // The right code forgot the tries counted at the code, in the unit of work that rolled
        // back: that try still counts, so four wrong ones make five and the next is locked out.
        for _ in 1...4 {
            _ = await Self.refusal {
                try await fixture.accounts.verify(email: "ana@example.org", code: "ZZZZZZ", appId: "APP", orgId: "ORG", now: fixture.now)
            }
        }
        let locked = await Self.refusal {
            try await fixture.accounts.verify(email: "ana@example.org", code: code, appId: "APP", orgId: "ORG", now: fixture.now)
        }
        #expect(locked == .locked(minutes: 15))
    }

    @Test func aNewCodeReplacesTheOldOne() async throws {
        let fixture = try Fixture()
        try await fixture.register()
        let old = try fixture.mailedToken(to: "ana@example.org")
        try await fixture.accounts.resendCode(email: "ana@example.org", appId: "APP", orgId: "ORG", now: fixture.now)
        try await fixture.accounts.resendCode(email: "nobody@example.org", appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(fixture.store.state.mail.count == 2, "none to an unknown address, and no error either")
        let new = try fixture.mailedToken(to: "ana@example.org")
        if new != old {
            #expect(await Self.refusal {
                try await fixture.accounts.verify(email: "ana@example.org", code: old, appId: "APP", orgId: "ORG", now: fixture.now)
            } == .invalid("Invalid code"))
        }
        try await fixture.accounts.verify(email: "ana@example.org", code: new, appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(fixture.store.state.participants.values.first?.verified == true)
    }

    @Test func fiveWrongCodesLockVerificationEvenForTheRightOne() async throws {
        let fixture = try Fixture()
        try await fixture.register()
        let code = try fixture.mailedToken(to: "ana@example.org")
        for _ in 1...5 {
            _ = await Self.refusal {
                try await fixture.accounts.verify(email: "ana@example.org", code: "ZZZZZZ", appId: "APP", orgId: "ORG", now: fixture.now)
            }
        }
        let refused = await Self.refusal {
            try await fixture.accounts.verify(email: "ana@example.org", code: code, appId: "APP", orgId: "ORG", now: fixture.now)
        }
        #expect(refused == .locked(minutes: 15))
        #expect(fixture.store.state.participants.values.first?.verified == false)
        fixture.clock.advance(16 * 60)
        try await fixture.accounts.verify(email: "ana@example.org", code: code, appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(fixture.store.state.participants.values.first?.verified == true)
    }

    // MARK: Sign-in

    @Test func theFifthWrongPasswordLocksTheAccountAndSaysSo() async throws {
        let fixture = try Fixture()
        _ = try await fixture.verifiedAccount()
        var answers: [RegistrationError?] = []
        for _ in 1...5 { answers.append(await Self.refusal { _ = try await fixture.signIn(password: "Wrong-guess-1") }) }
        #expect(answers == [.wrongCredentials, .wrongCredentials, .wrongCredentials, .wrongCredentials, .locked(minutes: 15)])
        #expect(await Self.refusal { _ = try await fixture.signIn() } == .locked(minutes: 15), "the right password waits too")
        #expect(fixture.store.actions.filter { $0 == "participant.login_failed" }.count == 4)
        #expect(fixture.store.actions.filter { $0 == "participant.locked" }.count == 1)
        fixture.clock.advance(15 * 60 + 1)
        _ = try await fixture.signIn()
    }

    @Test func anUnknownAddressAnswersAsAWrongPassword() async throws {
        let fixture = try Fixture()
        #expect(await Self.refusal { _ = try await fixture.signIn("nobody@example.org") } == .wrongCredentials)
        #expect(fixture.store.state.events.isEmpty)
    }

    @Test func aPasswordOlderThanTheExpiryAsksForANewOne() async throws {
        let fixture = try Fixture()
        _ = try await fixture.verifiedAccount()
        let fresh = try await fixture.accounts.login(
            email: "ana@example.org", password: "Sleep-well-1", appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(fresh.resetPassword != true)
        let later = try await fixture.accounts.login(
            email: "ana@example.org", password: "Sleep-well-1", appId: "APP", orgId: "ORG", now: fixture.now + 91 * 86_400)
        #expect(later.resetPassword == true)
    }

    // MARK: Passwords

    @Test func aTemporaryPasswordSignsInOnceAndAsksForANewPassword() async throws {
        let fixture = try Fixture()
        _ = try await fixture.verifiedAccount()
        try await fixture.accounts.forgotPassword(email: "ana@example.org", appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(fixture.store.state.mail.last?.kind == .passwordHelp)
        let temporary = try fixture.mailedToken(to: "ana@example.org")
        let reply = try await fixture.accounts.login(
            email: "ana@example.org", password: temporary, appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(reply.resetPassword == true)
        #expect(fixture.store.state.participants.values.first?.tempPasswordHash == nil, "spent by the sign-in")
        #expect(await Self.refusal { _ = try await fixture.signIn(password: temporary) } == .wrongCredentials)
        // The session it opened accepts it as the current password, once, for the change.
        let session = try #require(fixture.store.authenticate(auth: reply.auth))
        try await fixture.accounts.changePassword(session, current: temporary, new: "Brand-new-2", now: fixture.now)
        _ = try await fixture.signIn(password: "Brand-new-2")
    }

    @Test func passwordHelpTellsNoStrangerWhoHasAnAccount() async throws {
        let fixture = try Fixture()
        try await fixture.accounts.forgotPassword(email: "nobody@example.org", appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(fixture.store.state.mail.isEmpty)
        try await fixture.register()
        let unverified = await Self.refusal {
            try await fixture.accounts.forgotPassword(email: "ana@example.org", appId: "APP", orgId: "ORG", now: fixture.now)
        }
        #expect(unverified == .notVerified)
        #expect(fixture.store.state.mail.count == 1, "only the verification code")
    }

    @Test func aChangedPasswordMayNotRepeatARecentOneAndSignsOutTheOtherDevices() async throws {
        let fixture = try Fixture()
        let phone = try await fixture.verifiedAccount()
        let tablet = try await fixture.signIn()
        let refused = await Self.refusal {
            try await fixture.accounts.changePassword(phone, current: "Sleep-well-1", new: "Sleep-well-1", now: fixture.now)
        }
        #expect(refused == .invalid("The new password must differ from your last 10 passwords."))
        #expect(fixture.store.state.sessions[tablet.sessionId]?.revokedReason == nil, "a refused change signs nobody out")
        let wrongCurrent = await Self.refusal {
            try await fixture.accounts.changePassword(phone, current: "Not-the-one-1", new: "Brand-new-2", now: fixture.now)
        }
        #expect(wrongCurrent == .invalid("Current password is invalid."))
        try await fixture.accounts.changePassword(phone, current: "Sleep-well-1", new: "Brand-new-2", now: fixture.now)
        #expect(fixture.store.state.sessions[tablet.sessionId]?.revokedReason == "password changed")
        #expect(fixture.store.state.sessions[phone.sessionId]?.revokedReason == nil)
        #expect(fixture.store.state.passwordHistory.values.first?.count == 2)
        #expect(await Self.refusal { _ = try await fixture.signIn() } == .wrongCredentials)
    }

    // MARK: Sessions

    @Test func aRefreshTokenIsExchangedOnceAndItsCopyRevokesTheSession() async throws {
        let fixture = try Fixture()
        let first = try await fixture.register()
        let second = try await fixture.accounts.refresh(
            token: first.refreshToken, auth: nil, appId: "APP", orgId: "ORG", now: fixture.now)
        #expect(second.refreshToken != first.refreshToken)
        #expect(fixture.store.authenticate(auth: first.auth) == nil)
        #expect(fixture.store.authenticate(auth: second.auth) != nil)
        let copy = await Self.refusal {
            _ = try await fixture.accounts.refresh(token: first.refreshToken, auth: nil, appId: "APP", orgId: "ORG", now: fixture.now)
        }
        #expect(copy == .invalidRefreshToken)
        #expect(fixture.store.authenticate(auth: second.auth) == nil, "a leaked copy ends the session")
        #expect(fixture.store.actions.last == "participant.refresh_token_reused")
    }

    @Test func signingOutEndsOnlyThatSession() async throws {
        let fixture = try Fixture()
        let phone = try await fixture.verifiedAccount()
        let tablet = try await fixture.signIn()
        try await fixture.accounts.logout(phone)
        #expect(fixture.store.state.sessions[phone.sessionId]?.revokedReason == "logout")
        #expect(fixture.store.state.sessions[tablet.sessionId]?.revokedReason == nil)
    }

    // MARK: What an admin may do

    @Test func aDisabledAccountSignsOutEverywhereAndIsToldOnlyToWhoKnowsThePassword() async throws {
        let fixture = try Fixture()
        let session = try await fixture.verifiedAccount()
        let administration = AccountAdministration(accounts: fixture.accounts)
        #expect(try await administration.setDisabled(true, userId: session.userId, appId: "APP", actor: "admin-1"))
        #expect(try await administration.setDisabled(true, userId: session.userId, appId: "APP", actor: "admin-1") == false)
        #expect(fixture.store.state.sessions[session.sessionId]?.revokedReason == "disabled by an admin")
        #expect(await Self.refusal { _ = try await fixture.signIn(password: "Wrong-guess-1") } == .wrongCredentials)
        #expect(await Self.refusal { _ = try await fixture.signIn() } == .disabled)
        #expect(fixture.store.actions.filter { $0 == "account.disabled" }.count == 1)
        #expect(try await administration.setDisabled(false, userId: session.userId, appId: "APP", actor: "admin-1"))
        _ = try await fixture.signIn()
    }

    @Test func anAdminReachesOnlyTheAppsAccounts() async throws {
        let fixture = try Fixture()
        let session = try await fixture.verifiedAccount()
        let administration = AccountAdministration(accounts: fixture.accounts)
        let before = fixture.store.actions
        await #expect(throws: RegistrationAdminError.noAccount(appId: "OTHER")) {
            try await administration.setDisabled(true, userId: session.userId, appId: "OTHER", actor: "admin-1")
        }
        await #expect(throws: RegistrationAdminError.noAccount(appId: "APP")) {
            try await administration.unlock(userId: UUID(), appId: "APP", actor: "admin-1")
        }
        await #expect(throws: RegistrationAdminError.accountAlreadyVerified) {
            try await administration.resendVerification(userId: session.userId, appId: "APP", actor: "admin-1")
        }
        #expect(fixture.store.state.participants[session.userId]?.disabledAt == nil)
        #expect(fixture.store.actions == before)
    }

    @Test func unlockingForgetsTheFailedSignIns() async throws {
        let fixture = try Fixture()
        let session = try await fixture.verifiedAccount()
        let administration = AccountAdministration(accounts: fixture.accounts)
        #expect(try await administration.unlock(userId: session.userId, appId: "APP", actor: "admin-1") == false, "nothing to lift")
        for _ in 1...5 { _ = await Self.refusal { _ = try await fixture.signIn(password: "Wrong-guess-1") } }
        #expect(await Self.refusal { _ = try await fixture.signIn() } == .locked(minutes: 15))
        #expect(try await administration.unlock(userId: session.userId, appId: "APP", actor: "admin-1"))
        _ = try await fixture.signIn()
        #expect(fixture.store.actions.contains("account.unlocked"))
    }

    /// An account moved in from FDA MyStudies 2.x keeps that server's password hash, wrapped. The
    /// first sign-in with the right password replaces it, in the account and its history, with
    /// this platform's own, and says so in the audit trail; a wrong password changes nothing; the
    /// password then signs in against the new hash, and is still a recent one to a change.
    @Test func aMyStudiesPasswordSignsInAndIsRehashedOnce() async throws {
        let fixture = try Fixture()
        try await fixture.verifiedAccount()
        let (password, digest) = ("Correct-Horse-7!", PasswordHasherTestValues.digest)
        let carried = try #require(try await PasswordHasher(cost: 4).wrapMyStudiesHash(digest: digest, salt: PasswordHasherTestValues.salt))
        let userId = try #require(fixture.store.state.participants.values.first?.userId)
        try await fixture.store.seed {
            $0.participants[userId]?.passwordHash = carried
            $0.passwordHistory[userId] = [carried]
        }

        let wrong = await Self.refusal { _ = try await fixture.signIn(password: password + "x") }
        #expect(wrong == .wrongCredentials)
        #expect(fixture.store.state.participants[userId]?.passwordHash == carried)
        #expect(!fixture.store.actions.contains("participant.password_rehashed"))

        _ = try await fixture.signIn(password: password)
        let rehashed = try #require(fixture.store.state.participants[userId]?.passwordHash)
        #expect(rehashed.hasPrefix("$2"), "the platform's own bcrypt hash")
        #expect(fixture.store.state.passwordHistory[userId] == [rehashed])
        #expect(fixture.store.actions.filter { $0 == "participant.password_rehashed" }.count == 1)

        _ = try await fixture.signIn(password: password)
        #expect(fixture.store.state.participants[userId]?.passwordHash == rehashed, "rehashed once")
        #expect(fixture.store.actions.filter { $0 == "participant.password_rehashed" }.count == 1)
        let reused = await Self.refusal {
            let session = try await fixture.signIn(password: password)
            try await fixture.accounts.changePassword(session, current: password, new: password, now: fixture.now)
        }
        #expect(reused != nil, "the carried-over password is a recent one")
    }
}

/// A MyStudies 2.x salt and hash for "Correct-Horse-7!", from Python's hashlib following that
/// server's `HashUtils.hash` (as in `PasswordHasherTests`).
enum PasswordHasherTestValues {
    static let salt =
        "8ac435d740047536024bc52aaf4be65c99fcf3357e01a1963ceedd012ab8ee6f7f95e133dd003caccc296696420e3873ce6ce2b4d26ce3ba005169d6f01e43e7"
    static let digest =
        "7b93a8cff66e0a35396d9b7b85062032123ba542efc0c524550a5114e31959aa70c2affb8bfea6fd12b7ad92b664ecbaa441740ee39dfb95667b637bec07fe6d"
}
