import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Studies and their editable drafts: reads, the study's row locked, and the writes the draft
/// rules (`DraftEditing`) decide on.
package struct StudyStore: Sendable {
    /// What a save expects to find, from its `If-Match` or `If-None-Match: *`.
    package enum DraftPrecondition: Sendable, Equatable {
        /// Save whatever is there.
        case none
        /// Save only over this revision of an existing draft.
        case revision(Int)
        /// Save only when the study does not exist yet.
        case absent
    }

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    package func exists(studyId: String) async throws -> Bool {
        let rows = try await client.query("SELECT EXISTS (SELECT 1 FROM studies WHERE study_id = \(studyId))", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// A new study with `document` as its draft, made by `admin`; false, and nothing written,
    /// when its id is taken whatever its case (no conflict target: the case-folded unique index
    /// counts too, so a concurrent creation of the same id in another case loses here).
    package func insertStudy(_ document: StudyDocument, by admin: AuthenticatedAdmin, on connection: PostgresConnection)
        async throws -> Bool
    {
        let json = String(decoding: try JSONEncoder().encode(document), as: UTF8.self)
        let inserted = try await connection.query(
            """
            INSERT INTO studies (study_id, app_id, draft, draft_updated_by, created_by)
            VALUES (\(document.studyId), \(document.appId), \(json)::jsonb, \(admin.email), \(admin.email))
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: logger)
        for try await _ in inserted { return true }
        return false
    }

    /// `adminId` becomes the study's study admin.
    package func grantStudyAdmin(adminId: UUID, studyId: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO study_roles (admin_id, study_id, role) VALUES (\(adminId), \(studyId), 'study_admin')
            ON CONFLICT (admin_id, study_id) DO UPDATE SET role = 'study_admin'
            """, logger: logger)
    }

    /// Replaces the study's draft and counts its revision; `appId`, when given, moves the study
    /// to that app too.
    package func writeDraft(
        _ document: StudyDocument, studyId: String, by email: String, movingTo appId: String?, on connection: PostgresConnection
    ) async throws {
        let json = String(decoding: try JSONEncoder().encode(document), as: UTF8.self)
        try await connection.query(
            """
            UPDATE studies SET app_id = coalesce(\(appId), app_id), draft = \(json)::jsonb, draft_updated_at = now(),
                draft_updated_by = \(email), draft_revision = draft_revision + 1
            WHERE study_id = \(studyId)
            """, logger: logger)
    }

    /// A study as the draft rules see it, locked for the rest of a transaction.
    package struct LockedStudy: Sendable {
        package var status: StudyStatus
        package var appId: String
        package var draft: String
        /// Whether any version was ever frozen.
        package var published: Bool
        package var revision: Int
        /// The eligibility type of the newest frozen version.
        package var publishedEligibility: String?

        package init(
            status: StudyStatus, appId: String, draft: String, published: Bool, revision: Int, publishedEligibility: String?
        ) {
            self.status = status
            self.appId = appId
            self.draft = draft
            self.published = published
            self.revision = revision
            self.publishedEligibility = publishedEligibility
        }
    }

    package func lockStudy(_ studyId: String, on connection: PostgresConnection) async throws -> LockedStudy? {
        let rows = try await connection.query(
            """
            SELECT status, app_id, draft::text, EXISTS (SELECT 1 FROM study_versions v WHERE v.study_id = s.study_id),
                draft_revision,
                (SELECT v.document->'eligibility'->>'type' FROM study_versions v WHERE v.study_id = s.study_id
                 ORDER BY v.version DESC LIMIT 1)
            FROM studies s WHERE study_id = \(studyId) FOR UPDATE
            """, logger: logger)
        for try await (status, appId, draft, published, revision, eligibility) in rows.decode(
            (String, String, String, Bool, Int, String?).self)
        {
            return LockedStudy(
                status: StudyStatus(rawValue: status) ?? .preLaunch, appId: appId, draft: draft, published: published,
                revision: revision, publishedEligibility: eligibility)
        }
        return nil
    }

    /// The id of the study whose id equals `studyId` whatever the case, if any.
    package func foldedMatch(_ studyId: String, on connection: PostgresConnection) async throws -> String? {
        let rows = try await connection.query(
            "SELECT study_id FROM studies WHERE upper(study_id) = upper(\(studyId))", logger: logger)
        for try await id in rows.decode(String.self) { return id }
        return nil
    }

    /// The stored draft document, as JSON text, and its revision.
    package func draft(studyId: String) async throws -> (json: String, revision: Int)? {
        let rows = try await client.query(
            "SELECT draft::text, draft_revision FROM studies WHERE study_id = \(studyId)", logger: logger)
        for try await (text, revision) in rows.decode((String, Int).self) { return (text, revision) }
        return nil
    }

    /// One study as the list shows it.
    package func summary(studyId: String) async throws -> StudySummary? {
        let rows = try await client.query(
            """
            SELECT study_id, app_id, coalesce(draft->'name'->>'en', draft->>'name'), status, draft_updated_at,
                draft_updated_by, draft_revision
            FROM studies WHERE study_id = \(studyId)
            """, logger: logger)
        return try await Self.summaries(rows).first
    }

    /// Studies `admin` may see: all for a super-admin, otherwise those they hold a role on.
    package func list(visibleTo admin: AuthenticatedAdmin) async throws -> [StudySummary] {
        let everything = admin.role == .superAdmin
        let rows = try await client.query(
            """
            SELECT study_id, app_id, coalesce(draft->'name'->>'en', draft->>'name'), status, draft_updated_at,
                draft_updated_by, draft_revision
            FROM studies
            WHERE \(everything) OR study_id IN (SELECT study_id FROM study_roles WHERE admin_id = \(admin.id))
            ORDER BY study_id
            """, logger: logger)
        return try await Self.summaries(rows)
    }

    private static func summaries(_ rows: PostgresRowSequence) async throws -> [StudySummary] {
        var studies: [StudySummary] = []
        for try await (studyId, appId, name, status, updatedAt, updatedBy, revision) in rows.decode(
            (String, String, String?, String, Date, String, Int).self)
        {
            studies.append(
                StudySummary(
                    studyId: studyId, appId: appId, name: name ?? studyId, status: StudyStatus(rawValue: status) ?? .preLaunch,
                    draftUpdatedAt: updatedAt, draftUpdatedBy: updatedBy, draftRevision: revision))
        }
        return studies
    }
}

extension StudyStore {
    /// The study's status and app, and its frozen versions' documents, oldest first.
    package func movedStudy(studyId: String) async throws -> MovedStudy? {
        let rows = try await client.query(
            "SELECT status, app_id FROM studies WHERE study_id = \(studyId)", logger: logger)
        var found: (String, String)?
        for try await row in rows.decode((String, String).self) { found = row }
        guard let (statusName, appId) = found, let status = StudyStatus(rawValue: statusName) else { return nil }
        let versions = try await client.query(
            "SELECT document::text, consent_version FROM study_versions WHERE study_id = \(studyId) ORDER BY version",
            logger: logger)
        var frozen: [(document: StudyDocument, consentVersion: Int)] = []
        for try await (text, consent) in versions.decode((String, Int).self) {
            frozen.append((try JSONDecoder().decode(StudyDocument.self, from: Data(text.utf8)), consent))
        }
        return MovedStudy(status: status, appId: appId, frozen: frozen)
    }
}
