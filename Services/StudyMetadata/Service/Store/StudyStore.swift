import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Studies and their editable drafts.
struct StudyStore: Sendable {
    struct Summary: Codable, Sendable {
        var studyId: String
        var appId: String
        var name: String
        var status: StudyStatus
        var draftUpdatedAt: Date
        var draftUpdatedBy: String
    }

    enum SaveOutcome: Sendable {
        case created
        case updated
        /// The study is deactivated; its draft no longer changes.
        case closed
    }

    let client: PostgresClient
    let audit: AuditLog
    let logger: Logger

    func exists(studyId: String) async throws -> Bool {
        let rows = try await client.query("SELECT EXISTS (SELECT 1 FROM studies WHERE study_id = \(studyId))", logger: logger)
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }

    /// Saves the draft, creating the study (and giving its creator the study admin role) when
    /// new. The audit event commits with the change.
    func saveDraft(_ document: StudyDocument, by admin: AuthenticatedAdmin) async throws -> SaveOutcome {
        let json = String(decoding: try JSONEncoder().encode(document), as: UTF8.self)
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                INSERT INTO studies (study_id, app_id, draft, draft_updated_by, created_by)
                VALUES (\(document.studyId), \(document.appId), \(json)::jsonb, \(admin.email), \(admin.email))
                ON CONFLICT (study_id) DO UPDATE SET
                    app_id = EXCLUDED.app_id, draft = EXCLUDED.draft,
                    draft_updated_at = now(), draft_updated_by = EXCLUDED.draft_updated_by
                WHERE studies.status <> 'deactivated'
                RETURNING (xmax = 0)
                """, logger: logger)
            var saved: Bool?
            for try await wasInserted in rows.decode(Bool.self) { saved = wasInserted }
            guard let inserted = saved else { return .closed }
            if inserted, admin.role != .superAdmin {
                try await connection.query(
                    """
                    INSERT INTO study_roles (admin_id, study_id, role) VALUES (\(admin.id), \(document.studyId), 'study_admin')
                    ON CONFLICT (admin_id, study_id) DO UPDATE SET role = 'study_admin'
                    """, logger: logger)
            }
            try await audit.record(
                actor: admin.email, action: inserted ? "study.created" : "study.draft_saved", studyId: document.studyId,
                on: connection)
            return inserted ? .created : .updated
        }
    }

    /// The stored draft document, as JSON text.
    func draft(studyId: String) async throws -> String? {
        let rows = try await client.query("SELECT draft::text FROM studies WHERE study_id = \(studyId)", logger: logger)
        for try await text in rows.decode(String.self) { return text }
        return nil
    }

    /// Studies `admin` may see: all for a super-admin, otherwise those they hold a role on.
    func list(visibleTo admin: AuthenticatedAdmin) async throws -> [Summary] {
        let everything = admin.role == .superAdmin
        let rows = try await client.query(
            """
            SELECT study_id, app_id, coalesce(draft->'name'->>'en', draft->>'name'), status, draft_updated_at, draft_updated_by
            FROM studies
            WHERE \(everything) OR study_id IN (SELECT study_id FROM study_roles WHERE admin_id = \(admin.id))
            ORDER BY study_id
            """, logger: logger)
        var studies: [Summary] = []
        for try await (studyId, appId, name, status, updatedAt, updatedBy) in rows.decode(
            (String, String, String?, String, Date, String).self)
        {
            studies.append(
                Summary(
                    studyId: studyId, appId: appId, name: name ?? studyId, status: StudyStatus(rawValue: status) ?? .preLaunch,
                    draftUpdatedAt: updatedAt, draftUpdatedBy: updatedBy))
        }
        return studies
    }
}
