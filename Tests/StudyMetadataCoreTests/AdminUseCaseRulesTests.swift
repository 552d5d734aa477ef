import Configuration
import Foundation
import InMemoryPorts
import ServiceKit
import StudyMetadataCore
import StudyModels
import Testing

/// Study-metadata's account and app use cases (`AdminSessions`, `AdminTeams`, `APIKeys`,
/// `AppAdministration`) against in-memory accounts, attempts, apps, keys and audit log: each
/// refusal is its `StudyMetadataError`, changes nothing, and every change leaves its audit event.
@Suite struct AdminUseCaseRulesTests {
    static func settings() throws -> AdminSettings {
        try AdminSettings(reader: ConfigReader(provider: InMemoryProvider(values: [:])))
    }

    /// bcrypt at its lowest cost: the rules are under test here, not the hash's work.
    static let hasher = PasswordHasher(cost: 4)

    struct Accounts {
        var store = InMemoryAdminAccounts(studies: ["SLEEP"])
        var attempts = InMemoryAttempts()
        var audit = InMemoryAudit()

        func sessions() throws -> AdminSessions {
            AdminSessions(store: store, hasher: AdminUseCaseRulesTests.hasher, attempts: attempts, audit: audit, settings: try settings())
        }

        func teams() throws -> AdminTeams { AdminTeams(store: store, audit: audit, settings: try settings()) }

        /// An admin invited and with their first password set.
        func admin(_ email: String, password: String = "Correct-horse-7") async throws -> UUID {
            let invited = try await teams().invite(email: email, role: .admin, by: "root@example.org")
            _ = try await sessions().acceptInvitation(token: invited.invitation.token, password: password)
            return invited.id
        }
    }

    static func refusal(_ body: () async throws -> Void) async -> StudyMetadataError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? StudyMetadataError
        }
    }

    @Test func anInvitedAdminSetsAPasswordOnceAndSignsInWithAnExpiringToken() async throws {
        let accounts = Accounts()
        let invited = try await accounts.teams().invite(
            email: "ana@example.org", role: .admin, by: "root@example.org", now: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(invited.invitation.expiresAt == Date(timeIntervalSince1970: 1_800_000_000 + 72 * 3600))
        #expect(await Self.refusal { _ = try await accounts.sessions().acceptInvitation(token: invited.invitation.token, password: "short") }
            .map { if case .weakPassword = $0 { true } else { false } } == true)
        let email = try await accounts.sessions().acceptInvitation(token: invited.invitation.token, password: "Correct-horse-7")
        #expect(email == "ana@example.org")
        #expect(await Self.refusal {
            _ = try await accounts.sessions().acceptInvitation(token: invited.invitation.token, password: "Another-good-8")
        } == .invitationInvalid, "an invitation sets a password once")

        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let signedIn = try await accounts.sessions().signIn(email: "ANA@example.org", password: "Correct-horse-7", now: now)
        #expect(signedIn.expiresAt == now.addingTimeInterval(12 * 3600))
        #expect(accounts.store.sessionHashes == [SecureToken.hash(signedIn.token)], "the token is stored hashed")
        #expect(accounts.audit.actions == ["admin.invited", "admin.invitation_accepted", "admin.login"])
    }

    @Test func wrongPasswordsAndUnknownAccountsLookTheSameAndTheFifthTryLocks() async throws {
        let accounts = Accounts()
        _ = try await accounts.admin("ana@example.org")
        #expect(await Self.refusal { _ = try await accounts.sessions().signIn(email: "nobody@example.org", password: "x") }
            == .wrongCredentials)
        for _ in 1...5 {
            #expect(await Self.refusal { _ = try await accounts.sessions().signIn(email: "ana@example.org", password: "wrong") }
                == .wrongCredentials)
        }
        let locked = await Self.refusal {
            _ = try await accounts.sessions().signIn(email: "ana@example.org", password: "Correct-horse-7")
        }
        #expect(locked.map { if case .locked = $0 { true } else { false } } == true, "locked even for the right password")
        #expect(accounts.store.sessionHashes.isEmpty)
        #expect(accounts.audit.recorded.last?.action == "admin.login_refused")
        #expect(accounts.audit.recorded.filter { $0.details["locked"] == "true" }.count == 1, "the fifth wrong try says it locked")
    }

    @Test func aDisabledAccountIsRefusedAsAWrongPassword() async throws {
        let accounts = Accounts()
        let id = try await accounts.admin("ana@example.org")
        accounts.store.disable(id)
        #expect(await Self.refusal {
            _ = try await accounts.sessions().signIn(email: "ana@example.org", password: "Correct-horse-7")
        } == .wrongCredentials)
    }

    @Test func rolesAreGrantedOnStudiesThatExistToAdminsThatExist() async throws {
        let accounts = Accounts()
        let id = try await accounts.admin("ana@example.org")
        let teams = try accounts.teams()
        #expect(try await teams.grant(.editor, on: "SLEEP", to: .email("Ana@example.org"), by: "root@example.org") == id)
        #expect(try await accounts.store.studyRoles(adminId: id) == ["SLEEP": .editor])
        #expect(await Self.refusal { try await teams.grant(.editor, on: "NOPE", to: .id(id), by: "root") } == .noStudy("NOPE"))
        #expect(await Self.refusal { try await teams.grant(.editor, on: "SLEEP", to: .email("x@example.org"), by: "root") }
            == .noAdminWithEmail("x@example.org"))
        let stranger = UUID()
        #expect(await Self.refusal { try await teams.grant(.editor, on: "SLEEP", to: .id(stranger), by: "root") }
            == .noAdmin(stranger.uuidString))
        try await teams.revoke(adminId: id, on: "SLEEP", by: "root@example.org")
        #expect(await Self.refusal { try await teams.revoke(adminId: id, on: "SLEEP", by: "root") }
            == .noRole(adminId: id.uuidString, studyId: "SLEEP"))
        #expect(accounts.audit.actions.suffix(2) == ["study.role_granted", "study.role_revoked"])
        #expect(await Self.refusal { _ = try await teams.invite(email: "ana@EXAMPLE.org", role: .admin, by: "root") } == .adminExists)
        #expect(await Self.refusal { _ = try await teams.invite(email: "not an address", role: .admin, by: "root") } == .notAnEmailAddress)
    }

    @Test func apiKeysAreNamedBoundedAndRevokedOnlyByTheirAdmin() async throws {
        let store = InMemoryAPIKeys()
        let keys = APIKeys(store: store)
        let ana = AuthenticatedAdmin(id: UUID(), email: "ana@example.org", role: .admin, studyRoles: [:], tokenHash: "h1")
        let ben = AuthenticatedAdmin(id: UUID(), email: "ben@example.org", role: .admin, studyRoles: [:], tokenHash: "h2")
        let refused = await Self.refusal { _ = try await keys.create(for: ana, name: " \n ", days: 0) }
        guard case .invalid(let problems, .apiKey) = refused else {
            Issue.record("a blank name and 0 days answered \(String(describing: refused))")
            return
        }
        #expect(problems.map(\.pointer) == ["/name", "/expiresInDays"])
        let created = try await keys.create(for: ana, name: "nightly export", days: nil)
        #expect(created.key.hasPrefix(APIKeyStore.prefix))
        #expect(await Self.refusal { try await keys.revoke(created.id.uuidString, of: ben) } == .noKey)
        try await keys.revoke(created.id.uuidString, of: ana)
        #expect(store.live.isEmpty)
        for index in 1...APIKeyStore.maximumLive { _ = try await keys.create(for: ana, name: "key \(index)", days: 1) }
        #expect(await Self.refusal { _ = try await keys.create(for: ana, name: "one more", days: 1) } == .tooManyKeys)
        #expect(await Self.refusal { try await keys.revoke("not-a-uuid", of: ana) } == .noKey)
    }

    @Test func anAppIsCheckedBeforeItIsStoredAndItsIdNeverChanges() async throws {
        let apps = InMemoryApps()
        let administration = AppAdministration(apps: apps)
        let app = AppDefinition(appId: "SLEEPAPP", orgId: "Uni", name: "Sleep", kind: .standalone)
        let created = try await administration.create(app, by: "root@example.org")
        #expect(Set(created.credentials.keys) == Set(Platform.allCases.map(\.rawValue)))
        #expect(await Self.refusal { _ = try await administration.create(app, by: "root") } == .appIdTaken("SLEEPAPP"))
        let otherOrg = AppDefinition(appId: "DIARY", orgId: "UNI", name: "Diary", kind: .standalone)
        #expect(await Self.refusal { _ = try await administration.create(otherOrg, by: "root") }
            == .orgSpelledOtherwise(orgId: "UNI", existing: "Uni"))
        let renamed = await Self.refusal { try await administration.update(app, appId: "OTHER", by: "root") }
        guard case .invalid(let problems, .app) = renamed else {
            Issue.record("an update changing the app id answered \(String(describing: renamed))")
            return
        }
        #expect(problems.map(\.pointer) == ["/appId"])
        #expect(await Self.refusal { _ = try await administration.issueTestingCredentials(appId: "NONE", by: "root") } == .noApp("NONE"))
        #expect(apps.definitions.map(\.appId) == ["SLEEPAPP"])
    }
}
