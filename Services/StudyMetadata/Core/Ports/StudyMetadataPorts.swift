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

extension AdminStore: AdminAccounts {}
extension AppStore: AppRegistry {}
extension APIKeyStore: APIKeyRegistry {}
