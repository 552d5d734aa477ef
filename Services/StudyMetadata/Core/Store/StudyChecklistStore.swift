import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The ticked items of each study's manual check-list (`study_checklist`), with who ticked each
/// and when. A change is written with its audit events in one transaction.
package struct StudyChecklistStore: ChecklistTicks {
    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// The study's ticks, item id → who and when.
    package func ticks(studyId: String) async throws -> [String: (by: String, at: Date)] {
        try await Self.ticks(client.query(Self.ticksQuery(studyId), logger: logger))
    }

    static func ticksQuery(_ studyId: String) -> PostgresQuery {
        "SELECT item, ticked_by, ticked_at FROM study_checklist WHERE study_id = \(studyId)"
    }

    static func ticks(_ rows: PostgresRowSequence) async throws -> [String: (by: String, at: Date)] {
        var ticks: [String: (by: String, at: Date)] = [:]
        for try await (item, by, at) in rows.decode((String, String, Date).self) { ticks[item] = (by, at) }
        return ticks
    }

    /// Makes `ticked` (known item ids, each once) the study's ticked items: new ones by `actor`
    /// now, the others left with who ticked them; an audit event for each item ticked or
    /// unticked. Nil when the study does not exist.
    package func set(ticked: [String], studyId: String, by actor: String) async throws -> [String: (by: String, at: Date)]? {
        try await client.withTransaction(logger: logger) { connection in
            // The study's row, locked: two saves of its check-list take turns.
            let study = try await connection.query(
                "SELECT study_id FROM studies WHERE study_id = \(studyId) FOR UPDATE", logger: logger)
            guard try await study.decode(String.self).first(where: { _ in true }) != nil else { return nil }
            let existing = try await connection.query(
                "SELECT item FROM study_checklist WHERE study_id = \(studyId)", logger: logger)
            var before: [String] = []
            for try await item in existing.decode(String.self) { before.append(item) }
            let added = ticked.filter { item in !before.contains { $0.unicodeScalars.elementsEqual(item.unicodeScalars) } }
            let removed = before.filter { item in !ticked.contains { $0.unicodeScalars.elementsEqual(item.unicodeScalars) } }
            if !added.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO study_checklist (study_id, item, ticked_by)
                    SELECT \(studyId), item, \(actor) FROM unnest(\(added)::text[]) AS item
                    """, logger: logger)
            }
            if !removed.isEmpty {
                try await connection.query(
                    "DELETE FROM study_checklist WHERE study_id = \(studyId) AND item = ANY(\(removed)::text[])", logger: logger)
            }
            for item in added {
                try await audit.record(actor: actor, action: "study.checklist_ticked", studyId: studyId, details: ["item": item], on: connection)
            }
            for item in removed {
                try await audit.record(actor: actor, action: "study.checklist_unticked", studyId: studyId, details: ["item": item], on: connection)
            }
            return try await Self.ticks(connection.query(Self.ticksQuery(studyId), logger: logger))
        }
    }
}
