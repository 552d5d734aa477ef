import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// What testers recorded while their study was in testing: the participants enrolled then and
/// the token batches made then are marked (`testing`), so removing them touches nothing of the
/// study's real participants, however often or late the event that ends testing arrives.
package enum TestRunStore {
    package struct Removed: Sendable, Equatable {
        package var participants: Int
        package var tokens: Int
    }

    /// Removes the study's testers and everything they recorded, and every token issued during
    /// testing (used or not), in the caller's transaction; audited when anything went.
    package static func remove(
        studyKey: String, audit: AuditLog, on connection: PostgresConnection, logger: Logger
    ) async throws -> Removed {
        var testers: [Int64] = []
        for try await id in try await connection.query(
            "SELECT id FROM participants WHERE study_key = \(studyKey) AND testing FOR UPDATE", logger: logger
        ).decode(Int64.self) { testers.append(id) }
        // Most events are of studies that were never tested: two index probes, nothing more.
        var batches = false
        for try await _ in try await connection.query(
            "SELECT 1 FROM token_batches WHERE study_key = \(studyKey) AND testing LIMIT 1", logger: logger) { batches = true }
        guard batches || !testers.isEmpty else { return Removed(participants: 0, tokens: 0) }
        try await ResponseStore.deleteData(of: testers, studyKey: studyKey, on: connection, logger: logger)
        var tokens = 0
        for try await _ in try await connection.query(
            """
            DELETE FROM enrollment_tokens t USING token_batches b
            WHERE b.id = t.batch_id AND b.study_key = \(studyKey) AND (b.testing OR t.participant_id = ANY(\(testers)))
            RETURNING 1
            """, logger: logger) { tokens += 1 }
        try await connection.query(
            """
            DELETE FROM token_batches b WHERE b.study_key = \(studyKey) AND b.testing
              AND NOT EXISTS (SELECT 1 FROM enrollment_tokens t WHERE t.batch_id = b.id)
            """, logger: logger)
        try await connection.query("DELETE FROM participants WHERE id = ANY(\(testers))", logger: logger)
        let removed = Removed(participants: testers.count, tokens: tokens)
        if removed != Removed(participants: 0, tokens: 0) {
            try await audit.record(
                actor: "system", action: "study.test_data_removed", studyId: studyKey,
                details: ["participants": String(removed.participants), "tokens": String(removed.tokens)], on: connection)
        }
        return removed
    }
}
