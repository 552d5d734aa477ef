import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Forgets what the registration service recorded for a study during its test run, when
/// study-metadata says the run ended: the testers' study and activity states, their consents (and
/// the signed PDFs), and the invitations that brought them. Only rows written up to the moment
/// testing ended go, so a late or repeated delivery leaves the real participants who joined
/// since untouched.
package struct TestRunCleanup: Sendable {
    package let client: PostgresClient
    package let consents: any ConsentStorage
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, consents: any ConsentStorage, audit: AuditLog, logger: Logger) {
        self.client = client
        self.consents = consents
        self.audit = audit
        self.logger = logger
    }

    package func testingEnded(_ ended: StudyTestingEnded) async throws -> TestRunRemoval {
        let studyId = ended.studyId
        let at = ended.endedAt
        let (removed, pdfKeys) = try await client.withTransaction(logger: logger) { connection -> (TestRunRemoval, [String]) in
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
        // The records that named them are gone; a file left by a failure here is unreachable.
        for key in pdfKeys {
            do { try await consents.remove(key) } catch {
                logger.warning("a tester's consent PDF could not be removed", metadata: ["error": "\(error)"])
            }
        }
        return removed
    }
}
