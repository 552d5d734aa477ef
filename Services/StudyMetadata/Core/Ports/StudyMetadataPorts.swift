import Foundation
import ServiceKit
import StudyModels

// What study-metadata's account and app use cases need of storage, each as small as the use
// cases ask it. The PostgreSQL stores conform unchanged (at the end of this file); the tests'
// in-memory conformers (`Tests/InMemoryPorts`) let each use case's rules run without a database.

/// Admin accounts, their invitations, sessions and study roles (`AdminTeams`, `AdminSessions`).
package protocol AdminAccounts: Sendable {
    /// The account of `email`, whatever its case.
    func account(email: String) async throws -> AdminStore.Account?
    /// A new account; nil when the e-mail has one already.
    func createAdmin(email: String, role: AdminRole, passwordHash: String?) async throws -> UUID?
    func createInvitation(adminId: UUID, tokenHash: String, expiresAt: Date) async throws
    /// Sets the first password of the invitation `tokenHash` hashes; its e-mail, or nil when the
    /// invitation is unknown, used or expired.
    func acceptInvitation(tokenHash: String, passwordHash: String) async throws -> String?
    func exists(adminId: UUID) async throws -> Bool
    func adminId(email: String) async throws -> UUID?
    /// False when the study does not exist.
    func grant(adminId: UUID, studyId: String, role: StudyRole) async throws -> Bool
    /// False when the admin had no role on the study.
    func revoke(adminId: UUID, studyId: String) async throws -> Bool
    func startSession(adminId: UUID, tokenHash: String, expiresAt: Date) async throws
    func revokeSession(tokenHash: String) async throws
    func studyRoles(adminId: UUID) async throws -> [String: StudyRole]
}

/// The apps super-admins define, and their credentials (`AppAdministration`).
package protocol AppRegistry: Sendable {
    func create(_ app: AppDefinition, by actor: String) async throws -> AppStore.CreateOutcome
    /// New credentials for the app's test builds; nil when there is no such app.
    func issueTestingCredentials(appId: String, by actor: String) async throws -> [AppStore.IssuedCredential]?
    func update(_ app: AppDefinition, by actor: String) async throws -> AppStore.UpdateOutcome
}

/// An admin's API keys (`APIKeys`).
package protocol APIKeyRegistry: Sendable {
    /// Throws `APIKeyStore.Refusal.tooMany` when the admin has `APIKeyStore.maximumLive` live.
    func create(for admin: AuthenticatedAdmin, name: String, days: Int) async throws -> APIKeyCreated
    /// False when the admin has no key by that id.
    func revoke(_ id: UUID, of admin: AuthenticatedAdmin) async throws -> Bool
}

/// An app as it is defined (`Announcements`).
package protocol AppLookup: Sendable {
    func app(id: String) async throws -> AppDefinition?
}

/// Studies as their admins see them (`StudyMessages`).
package protocol StudySummaries: Sendable {
    func summary(studyId: String) async throws -> StudySummary?
    func exists(studyId: String) async throws -> Bool
}

/// The ticked items of studies' manual check-lists (`StudyChecklists`), item id → who ticked it
/// and when.
package protocol ChecklistTicks: Sendable {
    func ticks(studyId: String) async throws -> [String: (by: String, at: Date)]
    /// Makes `ticked` the study's ticked items, with an audit event for each change; nil when
    /// the study does not exist.
    func set(ticked: [String], studyId: String, by actor: String) async throws -> [String: (by: String, at: Date)]?
}

/// Notifications queued for the apps' users, each id used once, each with its audit event
/// (`Announcements`, `StudyMessages`).
package protocol NotificationOutbox: Sendable {
    /// An app-wide announcement due at `due`; nil when the app has a notification by that id.
    func announce(appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText, at due: Date, by actor: String)
        async throws -> NotificationStore.Record?
    /// A message to a study's participants, due now; nil when the study has one by that id.
    func sendStudyMessage(
        studyId: String, appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText, by actor: String
    ) async throws -> NotificationStore.Record?
    /// The study's notifications, newest first.
    func list(studyId: String) async throws -> [NotificationStore.Record]
}

extension AdminStore: AdminAccounts {}
extension AppStore: AppRegistry, AppLookup {}
extension APIKeyStore: APIKeyRegistry {}
extension StudyStore: StudySummaries {}

/// `NotificationStore` as the notification port: its writes record their audit events in
/// `audit`, in the same transaction.
package struct StoredNotifications: NotificationOutbox {
    package let store: NotificationStore
    package let audit: AuditLog

    package init(store: NotificationStore, audit: AuditLog) {
        self.store = store
        self.audit = audit
    }

    package func announce(
        appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText, at due: Date, by actor: String
    ) async throws -> NotificationStore.Record? {
        try await store.announce(
            appId: appId, notificationId: notificationId, title: title, message: message, at: due, by: actor, audit: audit)
    }

    package func sendStudyMessage(
        studyId: String, appId: String, notificationId: String, title: LocalizedText?, message: LocalizedText, by actor: String
    ) async throws -> NotificationStore.Record? {
        try await store.sendStudyMessage(
            studyId: studyId, appId: appId, notificationId: notificationId, title: title, message: message, by: actor, audit: audit)
    }

    package func list(studyId: String) async throws -> [NotificationStore.Record] {
        try await store.list(studyId: studyId)
    }
}
