import Foundation
import RegistrationCore
import ServiceKit
import StudyModels

/// The registration service's accounts, sessions, mail outbox, audit trail and tries at secrets
/// in memory, for `Accounts` and `AccountAdministration`: one state, changed in units of work
/// (`InMemoryTransactions`), so a refusal thrown halfway through one leaves nothing, as in
/// PostgreSQL. Tokens are random and kept only as SHA-256, as the stores keep them.
package final class InMemoryAccounts: Transactions, AccountLookup, AppDirectory, SessionRefresh, SecretAttempts, AuditTrail {
    package struct Session: Sendable {
        package var userId: UUID
        package var authHash: String
        package var authExpiresAt: Date
        package var refreshHash: String
        package var refreshExpiresAt: Date
        package var temporaryPassword: (hash: String, expiresAt: Date)?
        package var revokedReason: String?
    }

    package struct Mail: Sendable {
        package var message: MailMessage
        package var kind: MailKind
        package var appId: String
    }

    package struct State: Sendable {
        package var apps: [String: AppDefinition] = [:]
        package var participants: [UUID: Participant] = [:]
        /// Each account's password hashes, newest first.
        package var passwordHistory: [UUID: [String]] = [:]
        package var sessions: [UUID: Session] = [:]
        /// Refresh tokens exchanged, by hash, with their session.
        package var retired: [String: UUID] = [:]
        package var mail: [Mail] = []
        package var events: [InMemoryAudit.Event] = []
        package var attempts = AttemptCounts()
    }

    private let store: InMemoryTransactions<State>
    private let clock: @Sendable () -> Date
    private let accessDuration: TimeInterval
    private let refreshDuration: TimeInterval

    /// `apps`: the apps study-metadata has sent. `now`: the store's clock (`now()` in SQL).
    package init(
        apps: [AppDefinition], accessDuration: TimeInterval = 1800, refreshDuration: TimeInterval = 30 * 86_400,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        var state = State()
        for app in apps { state.apps[Self.appKey(app.appId, app.orgId)] = app }
        store = InMemoryTransactions(state)
        clock = now
        self.accessDuration = accessDuration
        self.refreshDuration = refreshDuration
    }

    /// What has been committed.
    package var state: State { store.committed }
    package var actions: [String] { state.events.map(\.action) }

    /// Changes what is committed outside the rules, as an import writes to the database.
    package func seed(_ change: (inout State) -> Void) async throws {
        try await store.update { change(&$0) }
    }

    static func appKey(_ appId: String, _ orgId: String) -> String { appId + "\u{0}" + orgId }

    /// The session an `auth` key opens, as `SessionStore.authenticate` finds it.
    package func authenticate(auth: String) -> SessionStore.Authenticated? {
        let hash = SecureToken.hash(auth)
        let now = clock()
        let state = state
        guard let (id, session) = state.sessions.first(where: { $0.value.authHash == hash }), session.revokedReason == nil,
            session.authExpiresAt > now, let account = state.participants[session.userId], account.disabledAt == nil
        else { return nil }
        return SessionStore.Authenticated(sessionId: id, userId: session.userId, appId: account.appId, orgId: account.orgId)
    }

    // MARK: Transactions

    package func run<Result: Sendable>(_ work: (any AccountWork) async throws -> Result) async throws -> Result {
        try await store.run { copy in
            try await work(Unit(copy: copy, now: clock(), accessDuration: accessDuration, refreshDuration: refreshDuration))
        }
    }

    // MARK: Reads and changes outside a unit of work

    package func find(appId: String, orgId: String, email: String) async throws -> Participant? {
        let key = EmailKey.of(email)
        return state.participants.values.first { $0.appId == appId && $0.orgId == orgId && EmailKey.of($0.email) == key }
    }

    package func find(userId: UUID) async throws -> Participant? { state.participants[userId] }

    package func app(appId: String, orgId: String) async throws -> AppDefinition? { state.apps[Self.appKey(appId, orgId)] }

    package func app(appId: String) async throws -> AppDefinition? {
        // As the store: the first organisation's, by id.
        state.apps.values.filter { $0.appId.unicodeScalars.elementsEqual(appId.unicodeScalars) }
            .min { $0.orgId.utf8.lexicographicallyPrecedes($1.orgId.utf8) }
    }

    package func refresh(token: String, auth: String?, appId: String, orgId: String, now: Date) async throws
        -> SessionStore.RefreshOutcome
    {
        let hash = SecureToken.hash(token)
        let authHash = auth.map(SecureToken.hash)
        let (accessDuration, refreshDuration) = (accessDuration, refreshDuration)
        return try await store.update { state in
            let usable = state.sessions.first { id, session in
                guard session.revokedReason == nil, session.refreshExpiresAt > now,
                    let account = state.participants[session.userId], account.appId == appId, account.orgId == orgId,
                    account.disabledAt == nil
                else { return false }
                return session.refreshHash == hash || (state.retired[hash] == id && session.authHash == authHash)
            }
            if let (id, session) = usable {
                let issued = SessionStore.Issued(sessionId: id, auth: SecureToken.generate(), refreshToken: SecureToken.generate())
                if state.retired[session.refreshHash] == nil { state.retired[session.refreshHash] = id }
                state.sessions[id]?.authHash = SecureToken.hash(issued.auth)
                state.sessions[id]?.authExpiresAt = now + accessDuration
                state.sessions[id]?.refreshHash = SecureToken.hash(issued.refreshToken)
                state.sessions[id]?.refreshExpiresAt = now + refreshDuration
                return .refreshed(issued, userId: session.userId)
            }
            guard let id = state.retired[hash], let session = state.sessions[id] else { return .invalid }
            state.sessions[id]?.revokedReason = session.revokedReason ?? "refresh token reused"
            return .reused(userId: session.userId)
        }
    }

    package func temporaryPasswordHash(sessionId: UUID, now: Date) async throws -> String? {
        guard let temporary = state.sessions[sessionId]?.temporaryPassword, temporary.expiresAt > now else { return nil }
        return temporary.hash
    }

    package func begin(_ subject: String, policy: AttemptCounter.Policy) async throws -> AttemptCounter.Admission {
        let now = clock()
        return try await store.update { $0.attempts.begin(subject, policy: policy, now: now) }
    }

    package func succeeded(_ subject: String) async throws {
        try await store.update { $0.attempts.succeeded(subject) }
    }

    package func lockedUntil(_ subject: String) async throws -> Date? {
        state.attempts.lockedUntil(subject, now: clock())
    }

    package func record(actor: String, action: String, studyId: String?, studyVersion: Int?, details: [String: String]) async throws {
        try await store.update { $0.events.append(InMemoryAudit.Event(actor: actor, action: action, studyId: studyId, details: details)) }
    }

    // MARK: One unit of work

    private struct Unit: AccountWork {
        let copy: WorkingCopy<State>
        let now: Date
        let accessDuration: TimeInterval
        let refreshDuration: TimeInterval

        func create(
            userId: UUID, appId: String, orgId: String, email: String, passwordHash: String, codeHash: String, codeExpiresAt: Date
        ) async throws -> Bool {
            let key = EmailKey.of(email)
            guard !copy.value.participants.values.contains(where: { $0.appId == appId && $0.orgId == orgId && EmailKey.of($0.email) == key })
            else { return false }
            copy.value.participants[userId] = Participant(
                userId: userId, appId: appId, orgId: orgId, email: email, passwordHash: passwordHash, passwordChangedAt: now,
                codeHash: codeHash, codeExpiresAt: codeExpiresAt)
            copy.value.passwordHistory[userId] = [passwordHash]
            return true
        }

        func lock(userId: UUID) async throws -> Participant? { copy.value.participants[userId] }

        func setCode(userId: UUID, hash: String, expiresAt: Date) async throws {
            copy.value.participants[userId]?.codeHash = hash
            copy.value.participants[userId]?.codeExpiresAt = expiresAt
        }

        func markVerified(userId: UUID) async throws {
            copy.value.participants[userId]?.verified = true
            copy.value.participants[userId]?.codeHash = nil
            copy.value.participants[userId]?.codeExpiresAt = nil
        }

        func recordLogin(userId: UUID, usedTemporaryPassword: Bool) async throws {
            guard usedTemporaryPassword else { return }
            copy.value.participants[userId]?.tempPasswordHash = nil
            copy.value.participants[userId]?.tempPasswordExpiresAt = nil
        }

        func setTemporaryPassword(userId: UUID, hash: String, expiresAt: Date) async throws {
            copy.value.participants[userId]?.tempPasswordHash = hash
            copy.value.participants[userId]?.tempPasswordExpiresAt = expiresAt
        }

        func recentPasswordHashes(userId: UUID, count: Int) async throws -> [String] {
            Array((copy.value.passwordHistory[userId] ?? []).prefix(max(count, 1)))
        }

        func changePassword(userId: UUID, hash: String, keep: Int) async throws {
            copy.value.participants[userId]?.passwordHash = hash
            copy.value.participants[userId]?.passwordChangedAt = now
            copy.value.participants[userId]?.tempPasswordHash = nil
            copy.value.participants[userId]?.tempPasswordExpiresAt = nil
            copy.value.passwordHistory[userId] = Array(([hash] + (copy.value.passwordHistory[userId] ?? [])).prefix(max(keep, 1)))
        }

        func rehashPassword(userId: UUID, from old: String, to new: String) async throws {
            if copy.value.participants[userId]?.passwordHash == old { copy.value.participants[userId]?.passwordHash = new }
            copy.value.passwordHistory[userId] = copy.value.passwordHistory[userId]?.map { $0 == old ? new : $0 }
        }

        func setDisabled(userId: UUID, _ disabled: Bool) async throws -> Bool {
            guard let account = copy.value.participants[userId], (account.disabledAt != nil) != disabled else { return false }
            copy.value.participants[userId]?.disabledAt = disabled ? now : nil
            return true
        }

        func openSession(userId: UUID, now: Date, temporaryPassword: (hash: String, expiresAt: Date)?) async throws
            -> SessionStore.Issued
        {
            let issued = SessionStore.Issued(sessionId: UUID(), auth: SecureToken.generate(), refreshToken: SecureToken.generate())
            copy.value.sessions[issued.sessionId] = Session(
                userId: userId, authHash: SecureToken.hash(issued.auth), authExpiresAt: now + accessDuration,
                refreshHash: SecureToken.hash(issued.refreshToken), refreshExpiresAt: now + refreshDuration,
                temporaryPassword: temporaryPassword)
            return issued
        }

        func revokeSession(sessionId: UUID, reason: String) async throws {
            if copy.value.sessions[sessionId]?.revokedReason == nil { copy.value.sessions[sessionId]?.revokedReason = reason }
        }

        func revokeSessions(userId: UUID, except keep: UUID?, reason: String) async throws {
            for (id, session) in copy.value.sessions where session.userId == userId && session.revokedReason == nil && id != keep {
                copy.value.sessions[id]?.revokedReason = reason
            }
        }

        func forgetTemporaryPasswords(userId: UUID) async throws {
            for (id, session) in copy.value.sessions where session.userId == userId { copy.value.sessions[id]?.temporaryPassword = nil }
        }

        func attemptsSucceeded(_ subject: String) async throws { copy.value.attempts.succeeded(subject) }

        func app(appId: String, orgId: String) async throws -> AppDefinition? { copy.value.apps[InMemoryAccounts.appKey(appId, orgId)] }

        func enqueue(_ message: MailMessage, kind: MailKind, appId: String) async throws {
            copy.value.mail.append(Mail(message: message, kind: kind, appId: appId))
        }

        func record(actor: String, action: String, details: [String: String]) async throws {
            copy.value.events.append(InMemoryAudit.Event(actor: actor, action: action, studyId: nil, details: details))
        }
    }
}

/// Participants' profiles and their sessions' devices in memory, for `ProfileUpdates`.
package final class InMemoryProfiles: Transactions, ProfileLookup {
    package struct Device: Sendable, Equatable {
        package var token: String?
        package var os: String?
        package var appVersion: String?

        package init(token: String? = nil, os: String? = nil, appVersion: String? = nil) {
            self.token = token
            self.os = os
            self.appVersion = appVersion
        }
    }

    package struct State: Sendable {
        package var profiles: [UUID: UserProfileReply] = [:]
        /// By session.
        package var devices: [UUID: Device] = [:]
    }

    private let store: InMemoryTransactions<State>

    package init(_ profiles: [UUID: UserProfileReply]) {
        store = InMemoryTransactions(State(profiles: profiles))
    }

    package var state: State { store.committed }

    package func profile(userId: UUID) async throws -> UserProfileReply? { state.profiles[userId] }

    package func run<Result: Sendable>(_ work: (any ProfileWork) async throws -> Result) async throws -> Result {
        try await store.run { copy in try await work(Unit(copy: copy)) }
    }

    private struct Unit: ProfileWork {
        let copy: WorkingCopy<State>

        func saveSettings(_ settings: UserProfileReply.Settings, userId: UUID) async throws {
            copy.value.profiles[userId]?.settings = settings
        }

        func setDevice(sessionId: UUID, token: String?, os: String?, appVersion: String?) async throws {
            if let token {
                for (id, device) in copy.value.devices where device.token == token && id != sessionId {
                    copy.value.devices[id]?.token = nil
                }
            }
            var device = copy.value.devices[sessionId] ?? Device()
            device.token = token ?? device.token
            device.os = os ?? device.os
            device.appVersion = appVersion ?? device.appVersion
            copy.value.devices[sessionId] = device
        }
    }
}
