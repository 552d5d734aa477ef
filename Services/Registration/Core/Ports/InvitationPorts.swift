import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

// What `Invitations` needs: invitations read outside a transaction, the study's sites, the apps,
// the response service's enrollment tokens, study-metadata's word on the study (`StudySchedules`),
// and one unit of work (`Transactions<any InvitationWork>`) per change. The rules (what a line of
// a CSV must be, the e-mail limits, which states may be resent or revoked) are `Invitations`'.

/// Invitations, read outside a transaction.
package protocol InvitationRecords: Sendable {
    /// Which of these e-mail keys already have an open invitation to the study.
    func openAddresses(studyId: String, emailKeys: [String]) async throws -> Set<String>
    func invitations(_ query: InvitationStore.Query) async throws -> InvitationList
    func invitation(studyId: String, id: UUID, identities: Bool) async throws -> Invitation?
}

/// The study's sites, by id and by lower-cased name.
package protocol SiteReferences: Sendable {
    func references(studyId: String) async throws -> [String: SiteStore.Reference]
}

/// The response service's enrollment tokens for invitations; both throw
/// `InvitationTokens.Unavailable` when it cannot be asked.
package protocol InvitationTokenIssuing: Sendable {
    func issue(_ request: InvitationTokenRequest, studyId: String, logger: Logger) async throws -> InvitationTokenReply
    func revoke(_ invitationIds: [UUID], studyId: String, logger: Logger) async throws -> InvitationRevocationReply
}

/// What the invitation rules change, inside one transaction.
package protocol InvitationWork {
    /// The invitation e-mails sent in the last day for the study and by `actor`, counted under
    /// locks held to the end of the transaction, so two senders cannot both pass a limit.
    func mailSentToday(studyId: String, actor: String) async throws -> (study: Int, actor: Int)
    func recordSends(_ invitationIds: [UUID], studyId: String, actor: String) async throws
    /// Throws a unique violation when an address got an open invitation since it was checked.
    func insert(_ invitations: [InvitationStore.New], studyId: String, actor: String) async throws
    /// The invitation, locked, with its state; nil when the study has none by that id.
    func lock(studyId: String, id: UUID) async throws -> InvitationStore.Open?
    func markResent(id: UUID, expiresAt: Date) async throws
    func markRevoked(id: UUID) async throws
    func recordEnrollment(_ enrollment: InvitationEnrollment) async throws -> InvitationStore.EnrollmentRecord
    func enqueue(_ message: MailMessage, kind: MailKind, appId: String) async throws
    func record(actor: String, action: String, studyId: String, details: [String: String]) async throws
}

extension InvitationStore: InvitationRecords {}
extension SiteStore: SiteReferences {}
extension InvitationTokens: InvitationTokenIssuing {}

/// The invitation store, the mail outbox and the audit log bound to one transaction's connection.
package struct PostgresInvitationWork: InvitationWork {
    package let connection: PostgresConnection
    package let store: InvitationStore
    package let mail: MailOutbox
    package let audit: AuditLog

    /// Units of work over these stores.
    package static func transactions(
        client: PostgresClient, store: InvitationStore, mail: MailOutbox, audit: AuditLog, logger: Logger
    ) -> PostgresTransactions<any InvitationWork> {
        PostgresTransactions(client: client, logger: logger) { connection in
            PostgresInvitationWork(connection: connection, store: store, mail: mail, audit: audit)
        }
    }

    package func mailSentToday(studyId: String, actor: String) async throws -> (study: Int, actor: Int) {
        try await store.mailSentToday(studyId: studyId, actor: actor, on: connection)
    }

    package func recordSends(_ invitationIds: [UUID], studyId: String, actor: String) async throws {
        try await store.recordSends(invitationIds, studyId: studyId, actor: actor, on: connection)
    }

    package func insert(_ invitations: [InvitationStore.New], studyId: String, actor: String) async throws {
        try await store.insert(invitations, studyId: studyId, actor: actor, on: connection)
    }

    package func lock(studyId: String, id: UUID) async throws -> InvitationStore.Open? {
        try await store.lock(studyId: studyId, id: id, on: connection)
    }

    package func markResent(id: UUID, expiresAt: Date) async throws { try await store.markResent(id: id, expiresAt: expiresAt, on: connection) }

    package func markRevoked(id: UUID) async throws { try await store.markRevoked(id: id, on: connection) }

    package func recordEnrollment(_ enrollment: InvitationEnrollment) async throws -> InvitationStore.EnrollmentRecord {
        try await store.recordEnrollment(enrollment, on: connection)
    }

    package func enqueue(_ message: MailMessage, kind: MailKind, appId: String) async throws {
        try await mail.enqueue(message, kind: kind, appId: appId, on: connection)
    }

    package func record(actor: String, action: String, studyId: String, details: [String: String]) async throws {
        try await audit.record(actor: actor, action: action, studyId: studyId, details: details, on: connection)
    }
}
