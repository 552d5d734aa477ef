import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// What a study's test run left in the registration database: removed in one transaction with
/// its audit event, counting each kind of row (`TestRunCleanup`).
package struct TestRunStore: Sendable {
    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// Deletes the study's participant states, activity states, consent records, invitations
    /// and their sends written up to `at`; the counts, and the keys of the signed PDFs the
    /// consent records named (the caller removes the files once this has committed).
    package func removeRecords(studyId: String, upTo at: Date) async throws -> (removed: TestRunRemoval, pdfKeys: [String]) {
        try await client.withTransaction(logger: logger) { connection -> (TestRunRemoval, [String]) in
            func count(_ query: PostgresQuery) async throws -> Int {
                var rows = 0
                for try await _ in try await connection.query(query, logger: logger) { rows += 1 }
                return rows
            }
            let activities = try await count(
                "DELETE FROM participant_activities WHERE study_id = \(studyId) AND updated_at <= \(at) RETURNING 1")
            let states = try await count(
                "DELETE FROM participant_studies WHERE study_id = \(studyId) AND updated_at <= \(at) RETURNING 1")
            var keys: [String] = []
            var consents = 0
            for try await key in try await connection.query(
                "DELETE FROM consent_records WHERE study_id = \(studyId) AND created_at <= \(at) RETURNING pdf_key",
                logger: logger
            ).decode(String?.self) {
                consents += 1
                if let key { keys.append(key) }
            }
            try await connection.query(
                "DELETE FROM invitation_sends WHERE study_id = \(studyId) AND sent_at <= \(at)", logger: logger)
            try await connection.query(
                "DELETE FROM consent_reminders WHERE study_id = \(studyId) AND requested_at <= \(at)", logger: logger)
            let invitations = try await count(
                "DELETE FROM invitations WHERE study_id = \(studyId) AND created_at <= \(at) RETURNING 1")
            let removed = TestRunRemoval(
                studyStates: states, activityStates: activities, consents: consents, invitations: invitations)
            try await audit.record(
                actor: "system", action: "study.test_data_removed", studyId: studyId,
                details: [
                    "studyStates": String(states), "activityStates": String(activities), "consents": String(consents),
                    "invitations": String(invitations),
                ], on: connection)
            return (removed, keys)
        }
    }
}
