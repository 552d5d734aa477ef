import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

// What the draft rules (`DraftEditing`, and through it the activity, schema protocol and Sage
// assessment imports) need of storage: reads of a study's draft, and one unit of work
// (`Transactions<any DraftWork>`) that locks the study, writes the draft and records the audit
// event. The rules (who may write, what stays fixed after publishing and launch, what a saved
// draft must be) are `DraftEditing`'s; `StudyStore` only reads, locks and writes.

/// Studies' drafts, read outside a transaction.
package protocol DraftReading: Sendable {
    func exists(studyId: String) async throws -> Bool
    /// The stored draft document, as JSON text, and its revision.
    func draft(studyId: String) async throws -> (json: String, revision: Int)?
}

/// What the draft rules change, inside one transaction.
package protocol DraftWork {
    /// The study, locked for the rest of the transaction; nil for no study.
    func lockStudy(_ studyId: String) async throws -> StudyStore.LockedStudy?
    /// The id of the study whose id equals `studyId` whatever the case, if any.
    func studyId(foldedLike studyId: String) async throws -> String?
    /// A new study with `document` as its draft; false when its id is taken whatever its case.
    func insertStudy(_ document: StudyDocument, by admin: AuthenticatedAdmin) async throws -> Bool
    func grantStudyAdmin(adminId: UUID, studyId: String) async throws
    /// The draft replaced and its revision counted; `appId`, when given, moves the study too.
    func writeDraft(_ document: StudyDocument, studyId: String, by email: String, movingTo appId: String?) async throws
    func record(actor: String, action: String, studyId: String, details: [String: String]) async throws
}

extension StudyStore: DraftReading {}

/// `StudyStore` and the audit log bound to one transaction's connection.
package struct PostgresDraftWork: DraftWork {
    package let connection: PostgresConnection
    package let studies: StudyStore
    package let audit: AuditLog

    /// Units of work over the study store.
    package static func transactions(client: PostgresClient, studies: StudyStore, audit: AuditLog, logger: Logger)
        -> PostgresTransactions<any DraftWork>
    {
        PostgresTransactions(client: client, logger: logger) { PostgresDraftWork(connection: $0, studies: studies, audit: audit) }
    }

    package func lockStudy(_ studyId: String) async throws -> StudyStore.LockedStudy? {
        try await studies.lockStudy(studyId, on: connection)
    }

    package func studyId(foldedLike studyId: String) async throws -> String? {
        try await studies.foldedMatch(studyId, on: connection)
    }

    package func insertStudy(_ document: StudyDocument, by admin: AuthenticatedAdmin) async throws -> Bool {
        try await studies.insertStudy(document, by: admin, on: connection)
    }

    package func grantStudyAdmin(adminId: UUID, studyId: String) async throws {
        try await studies.grantStudyAdmin(adminId: adminId, studyId: studyId, on: connection)
    }

    package func writeDraft(_ document: StudyDocument, studyId: String, by email: String, movingTo appId: String?) async throws {
        try await studies.writeDraft(document, studyId: studyId, by: email, movingTo: appId, on: connection)
    }

    package func record(actor: String, action: String, studyId: String, details: [String: String]) async throws {
        try await audit.record(actor: actor, action: action, studyId: studyId, details: details, on: connection)
    }
}

/// What moving a study in (`StudyMoveIns`) reads of a study already here.
package protocol MovedStudyReading: Sendable {
    /// The study's status and app, and every frozen version's document, oldest first; nil when
    /// there is no study of that id.
    func movedStudy(studyId: String) async throws -> MovedStudy?
}

/// A study as a move-in finds it.
package struct MovedStudy: Sendable {
    package var status: StudyStatus
    package var appId: String
    /// Each frozen version's document and consent version, oldest first.
    package var frozen: [(document: StudyDocument, consentVersion: Int)]

    package init(status: StudyStatus, appId: String, frozen: [(document: StudyDocument, consentVersion: Int)]) {
        self.status = status
        self.appId = appId
        self.frozen = frozen
    }
}

extension StudyStore: MovedStudyReading {}
