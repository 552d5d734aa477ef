import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Studies and their editable drafts.
package struct StudyStore: Sendable {
    package enum SaveOutcome: Sendable {
        case created
        case updated
        /// The study is deactivated; its draft no longer changes.
        case closed
        /// The study has been published in this app, and the draft names another.
        case appFixed(String)
        /// The study has launched with this eligibility type, and the draft names another:
        /// participants joined by it.
        case eligibilityFixed(String)
        /// Another study's id differs from this one only in case (ids are unique whatever their
        /// case); it carries that study's id.
        case idTaken(String)
        /// The draft is not what the save expected (`DraftPrecondition`); it carries the draft's
        /// current revision, 0 when there is no such study.
        case preconditionFailed(Int)
    }

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
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    package func exists(studyId: String) async throws -> Bool {
        let rows = try await client.query("SELECT EXISTS (SELECT 1 FROM studies WHERE study_id = \(studyId))", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// Saves the draft, creating the study (and giving its creator the study admin role) when
    /// new. The audit event commits with the change. Once a study has been published its app is
    /// fixed: participants' records and enrollment tokens hang on it.
    ///
    /// - Parameter expecting: what the caller read; a draft that is otherwise is left as it is.
    package func saveDraft(
        _ document: StudyDocument, by admin: AuthenticatedAdmin, expecting: DraftPrecondition = .none
    ) async throws -> SaveOutcome {
        let json = String(decoding: try JSONEncoder().encode(document), as: UTF8.self)
        return try await client.withTransaction(logger: logger) { connection in
            let existing = try await lockStudy(document.studyId, on: connection)
            if let existing {
                if existing.status == .deactivated { return .closed }
                switch expecting {
                case .none: break
                case .revision(let revision) where revision == existing.revision: break
                case .revision, .absent: return .preconditionFailed(existing.revision)
                }
                if existing.published, existing.appId != document.appId { return .appFixed(existing.appId) }
                if [.active, .paused].contains(existing.status), let launched = existing.publishedEligibility,
                    launched != document.eligibility.type.rawValue
                {
                    return .eligibilityFixed(launched)
                }
                try await connection.query(
                    """
                    UPDATE studies SET app_id = \(document.appId), draft = \(json)::jsonb, draft_updated_at = now(),
                        draft_updated_by = \(admin.email), draft_revision = draft_revision + 1
                    WHERE study_id = \(document.studyId)
                    """, logger: logger)
            } else {
                if case .revision = expecting { return .preconditionFailed(0) }
                // No conflict target: the case-folded unique index counts too, so a concurrent
                // creation of the same id in another case loses here instead of failing.
                let inserted = try await connection.query(
                    """
                    INSERT INTO studies (study_id, app_id, draft, draft_updated_by, created_by)
                    VALUES (\(document.studyId), \(document.appId), \(json)::jsonb, \(admin.email), \(admin.email))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger)
                var created = false
                for try await _ in inserted { created = true }
                guard created else {
                    return .idTaken(try await foldedMatch(document.studyId, on: connection) ?? document.studyId)
                }
                if admin.role != .superAdmin {
                    try await connection.query(
                        """
                        INSERT INTO study_roles (admin_id, study_id, role) VALUES (\(admin.id), \(document.studyId), 'study_admin')
                        ON CONFLICT (admin_id, study_id) DO UPDATE SET role = 'study_admin'
                        """, logger: logger)
                }
            }
            // What changed, for the audit log; a draft the model no longer reads is said whole.
            let changed = existing.map { existing in
                (try? JSONDecoder().decode(StudyDocument.self, from: Data(existing.draft.utf8)))
                    .map { DraftChanges.between($0, document) } ?? "the document"
            }
            try await audit.record(
                actor: admin.email, action: existing == nil ? "study.created" : "study.draft_saved",
                studyId: document.studyId, details: changed.map { ["changed": $0] } ?? [:], on: connection)
            return existing == nil ? .created : .updated
        }
    }

    package enum DraftEdit<Made: Sendable>: Sendable {
        case saved(warnings: [ValidationProblem], Made)
        case notFound
        case closed
        /// Problems of the edited draft, located in the draft; nothing was saved.
        case invalid([ValidationProblem], Made)
    }

    /// What a draft edit is judged by: the problems that refuse it, and the warnings saved with it.
    package typealias DraftReview = @Sendable (StudyDocument) -> (problems: [ValidationProblem], warnings: [ValidationProblem])

    /// Changes a study's draft with `edit` and saves it if `review` finds no problem in the whole
    /// draft, in one transaction that locks the study's row, so concurrent edits are not lost.
    /// The rules are the caller's (`DraftEditing` passes the study validator's): the store applies
    /// none of its own. The audit event `action` commits with the change; an edit that leaves the
    /// draft as it was writes nothing.
    package func editDraft<Made: Sendable>(
        studyId: String, by admin: AuthenticatedAdmin, action: String, details: [String: String] = [:], review: DraftReview,
        edit: @Sendable (inout StudyDocument) -> Made
    ) async throws -> DraftEdit<Made> {
        try await client.withTransaction(logger: logger) { connection in
            guard let existing = try await lockStudy(studyId, on: connection) else { return .notFound }
            if existing.status == .deactivated { return .closed }
            var draft = try JSONDecoder().decode(StudyDocument.self, from: Data(existing.draft.utf8))
            let original = draft
            let made = edit(&draft)
            let (problems, warnings) = review(draft)
            guard problems.isEmpty else { return .invalid(problems, made) }
            // An edit that changes nothing writes nothing, and records no event.
            if draft == original { return .saved(warnings: warnings, made) }
            let json = String(decoding: try JSONEncoder().encode(draft), as: UTF8.self)
            try await connection.query(
                """
                UPDATE studies SET draft = \(json)::jsonb, draft_updated_at = now(), draft_updated_by = \(admin.email),
                    draft_revision = draft_revision + 1
                WHERE study_id = \(studyId)
                """, logger: logger)
            try await audit.record(
                actor: admin.email, action: action, studyId: studyId,
                details: details.merging(["changed": DraftChanges.between(original, draft)]) { mine, _ in mine }, on: connection)
            return .saved(warnings: warnings, made)
        }
    }

    private struct LockedStudy {
        package var status: StudyStatus
        package var appId: String
        package var draft: String
        /// Whether any version was ever frozen.
        package var published: Bool
        package var revision: Int
        /// The eligibility type of the newest frozen version.
        package var publishedEligibility: String?
    }

    private func lockStudy(_ studyId: String, on connection: PostgresConnection) async throws -> LockedStudy? {
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
    private func foldedMatch(_ studyId: String, on connection: PostgresConnection) async throws -> String? {
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
