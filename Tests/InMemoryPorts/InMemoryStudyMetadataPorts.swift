import Foundation
import ServiceKit
import StudyMetadataCore
import StudyModels
import Synchronization

/// Admin accounts in memory, with the store's rules: one account per e-mail whatever its case,
/// an invitation used once and before it expires, roles only on studies that exist.
package final class InMemoryAdminAccounts: AdminAccounts, Sendable {
    private struct Invitation {
        var adminId: UUID
        var expiresAt: Date
        var used = false
    }

    private struct State {
        var accounts: [UUID: AdminStore.Account] = [:]
        var invitations: [String: Invitation] = [:]
        var sessions: [String: (adminId: UUID, expiresAt: Date)] = [:]
        var roles: [UUID: [String: StudyRole]] = [:]
        var studies: Set<String>
    }

    private let state: Mutex<State>
    private let now: @Sendable () -> Date

    /// `studies`: the ids of the studies that exist.
    package init(studies: Set<String> = [], now: @escaping @Sendable () -> Date = Date.init) {
        state = Mutex(State(studies: studies))
        self.now = now
    }

    /// The session tokens' hashes open now.
    package var sessionHashes: Set<String> { state.withLock { Set($0.sessions.keys) } }

    package func account(email: String) async throws -> AdminStore.Account? {
        state.withLock { $0.accounts.values.first { $0.email.lowercased() == email.lowercased() } }
    }

    package func createAdmin(email: String, role: AdminRole, passwordHash: String?) async throws -> UUID? {
        state.withLock { state in
            guard !state.accounts.values.contains(where: { $0.email.lowercased() == email.lowercased() }) else { return nil }
            let id = UUID()
            state.accounts[id] = AdminStore.Account(id: id, email: email, passwordHash: passwordHash, role: role, disabled: false)
            return id
        }
    }

    package func createInvitation(adminId: UUID, tokenHash: String, expiresAt: Date) async throws {
        state.withLock { $0.invitations[tokenHash] = Invitation(adminId: adminId, expiresAt: expiresAt) }
    }

    package func acceptInvitation(tokenHash: String, passwordHash: String) async throws -> String? {
        let now = now()
        return state.withLock { state in
            guard let invitation = state.invitations[tokenHash], !invitation.used, invitation.expiresAt > now,
                let account = state.accounts[invitation.adminId]
            else { return nil }
            state.invitations[tokenHash]?.used = true
            state.accounts[invitation.adminId]?.passwordHash = passwordHash
            return account.email
        }
    }

    package func exists(adminId: UUID) async throws -> Bool { state.withLock { $0.accounts[adminId] != nil } }

    package func adminId(email: String) async throws -> UUID? { try await account(email: email)?.id }

    package func grant(adminId: UUID, studyId: String, role: StudyRole) async throws -> Bool {
        state.withLock { state in
            guard state.studies.contains(studyId) else { return false }
            state.roles[adminId, default: [:]][studyId] = role
            return true
        }
    }

    package func revoke(adminId: UUID, studyId: String) async throws -> Bool {
        state.withLock { $0.roles[adminId]?.removeValue(forKey: studyId) != nil }
    }

    package func startSession(adminId: UUID, tokenHash: String, expiresAt: Date) async throws {
        state.withLock { $0.sessions[tokenHash] = (adminId, expiresAt) }
    }

    package func revokeSession(tokenHash: String) async throws {
        _ = state.withLock { $0.sessions.removeValue(forKey: tokenHash) }
    }

    package func studyRoles(adminId: UUID) async throws -> [String: StudyRole] { state.withLock { $0.roles[adminId] ?? [:] } }

    /// Disables an account, as a super-admin would.
    package func disable(_ adminId: UUID) { state.withLock { $0.accounts[adminId]?.disabled = true } }
}

/// Apps in memory: ids unique whatever their case, an org id spelled one way, a credential per
/// platform issued on creation and again for test builds.
package final class InMemoryApps: AppRegistry, AppLookup, Sendable {
    private let apps = Mutex<[String: AppDefinition]>([:])

    package init() {}

    package var definitions: [AppDefinition] { apps.withLock { Array($0.values) } }

    package func app(id: String) async throws -> AppDefinition? { apps.withLock { $0[id] } }

    private static func credentials(_ app: AppDefinition) -> [AppStore.IssuedCredential] {
        Platform.allCases.map { AppStore.IssuedCredential(platform: $0, key: SecureToken.generate(), token: SecureToken.generate()) }
    }

    package func create(_ app: AppDefinition, by actor: String) async throws -> AppStore.CreateOutcome {
        apps.withLock { apps in
            guard !apps.keys.contains(where: { $0.lowercased() == app.appId.lowercased() }) else { return .idTaken }
            if let other = apps.values.first(where: { $0.orgId.lowercased() == app.orgId.lowercased() && $0.orgId != app.orgId }) {
                return .orgSpelledOtherwise(other.orgId)
            }
            apps[app.appId] = app
            return .created(Self.credentials(app))
        }
    }

    package func issueTestingCredentials(appId: String, by actor: String) async throws -> [AppStore.IssuedCredential]? {
        apps.withLock { $0[appId] }.map(Self.credentials)
    }

    package func update(_ app: AppDefinition, by actor: String) async throws -> AppStore.UpdateOutcome {
        apps.withLock { apps in
            guard apps[app.appId] != nil else { return .notFound }
            if let other = apps.values.first(where: {
                $0.appId != app.appId && $0.orgId.lowercased() == app.orgId.lowercased() && $0.orgId != app.orgId
            }) {
                return .orgSpelledOtherwise(other.orgId)
            }
            apps[app.appId] = app
            return .updated
        }
    }
}

/// API keys in memory: at most `APIKeyStore.maximumLive` live per admin, each revoked by its own
/// admin only.
package final class InMemoryAPIKeys: APIKeyRegistry, Sendable {
    private let keys = Mutex<[(id: UUID, adminId: UUID, name: String, live: Bool)]>([])

    package init() {}

    package var live: [String] { keys.withLock { $0.filter(\.live).map(\.name) } }

    package func create(for admin: AuthenticatedAdmin, name: String, days: Int) async throws -> APIKeyCreated {
        try keys.withLock { keys in
            guard keys.filter({ $0.adminId == admin.id && $0.live }).count < APIKeyStore.maximumLive else {
                throw APIKeyStore.Refusal.tooMany
            }
            let id = UUID()
            keys.append((id, admin.id, name, true))
            return APIKeyCreated(
                id: id, key: APIKeyStore.prefix + SecureToken.generate(), expiresAt: Date().addingTimeInterval(TimeInterval(days) * 86_400))
        }
    }

    package func revoke(_ id: UUID, of admin: AuthenticatedAdmin) async throws -> Bool {
        keys.withLock { keys in
            guard let index = keys.firstIndex(where: { $0.id == id && $0.adminId == admin.id && $0.live }) else { return false }
            keys[index].live = false
            return true
        }
    }
}

/// Studies as their admins see them, in memory: a summary per study, its status the test's.
package final class InMemoryStudySummaries: StudySummaries, Sendable {
    private let summaries: Mutex<[String: StudySummary]>

    package init(_ summaries: [StudySummary]) {
        self.summaries = Mutex(Dictionary(uniqueKeysWithValues: summaries.map { ($0.studyId, $0) }))
    }

    package func summary(studyId: String) async throws -> StudySummary? { summaries.withLock { $0[studyId] } }
    package func exists(studyId: String) async throws -> Bool { summaries.withLock { $0[studyId] != nil } }
}

/// Notifications queued in memory, each id used once per app (announcements) or per study
/// (messages), each with its audit event, as the store writes them.
package final class InMemoryNotifications: NotificationOutbox, Sendable {
    private let records = Mutex<[NotificationStore.Record]>([])
    package let audit = InMemoryAudit()

    package init() {}

    package var queued: [NotificationStore.Record] { records.withLock { $0 } }

    package func announce(
        appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText, at due: Date, by actor: String
    ) async throws -> NotificationStore.Record? {
        guard let record = insertOnce(NotificationStore.Record(
            id: 0, notificationId: notificationId, appId: appId, studyId: nil, origin: .announcement, type: .gateway, subtype: "Announcement",
            title: title, message: message, activityId: nil, resourceId: nil, dueAt: due, sentAt: nil))
        else { return nil }
        try await audit.record(actor: actor, action: "notification.announced", details: ["appId": appId, "notificationId": notificationId])
        return record
    }

    package func sendStudyMessage(
        studyId: String, appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText, by actor: String
    ) async throws -> NotificationStore.Record? {
        guard let record = insertOnce(NotificationStore.Record(
            id: 0, notificationId: notificationId, appId: appId, studyId: studyId, origin: .message, type: .study, subtype: "Announcement",
            title: title, message: message, activityId: nil, resourceId: nil, dueAt: Date(), sentAt: nil))
        else { return nil }
        try await audit.record(actor: actor, action: "study.message_sent", studyId: studyId, details: ["notificationId": notificationId])
        return record
    }

    package func list(studyId: String) async throws -> [NotificationStore.Record] {
        records.withLock { $0.filter { $0.studyId == studyId }.reversed() }
    }

    /// `record` with its id, unless its app (announcements) or study (messages) has one by its id.
    private func insertOnce(_ record: NotificationStore.Record) -> NotificationStore.Record? {
        records.withLock { records in
            let taken = records.contains {
                $0.notificationId == record.notificationId && $0.origin == record.origin
                    && (record.studyId == nil ? $0.appId == record.appId : $0.studyId == record.studyId)
            }
            guard !taken else { return nil }
            var stored = record
            stored.id = Int64(records.count + 1)
            records.append(stored)
            return stored
        }
    }
}
