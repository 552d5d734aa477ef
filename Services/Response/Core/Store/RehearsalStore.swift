import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// The rows a storage rehearsal needs before its synthetic response can be written the way a
/// real one is (the study, a participant, the response the answers' timing rows point at), on
/// the rehearsal's connection. Its transaction is always rolled back: none of them is ever seen
/// outside it.
package struct RehearsalStore: Sendable {
    package let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    /// Marks where one design's rehearsal starts, so that the next meets the tables as they were.
    package func begin(on connection: PostgresConnection) async throws {
        try await connection.query("SAVEPOINT rehearsal", logger: logger)
    }

    /// Undoes one design's rehearsal.
    package func undo(on connection: PostgresConnection) async throws {
        try await connection.query("ROLLBACK TO SAVEPOINT rehearsal", logger: logger)
    }

    /// The study's row: a study never published has none yet, and its tables need one.
    package func ensureStudy(studyKey: String, studyId: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO studies (study_key, study_id, app_id, org_id, status, version, event_at, event)
            VALUES (\(studyKey), \(studyId), '', '', 'draft', 0, now(), '{}'::jsonb)
            ON CONFLICT (study_key) DO NOTHING
            """, logger: logger)
    }

    /// A participant, and a response of `activityId` holding `data`, in study `studyKey`.
    /// Returns the participant's id and number, and the response's id.
    package func stage(
        studyKey: String, activityId: String, data: String, on connection: PostgresConnection
    ) async throws -> (participantId: Int64, participantNumber: Int64, responseId: Int64) {
        var participantId: Int64?
        var participantNumber: Int64 = 0
        for try await (id, number) in try await connection.query(
            """
            INSERT INTO participants (study_key, status, allow_data_sharing, testing)
            VALUES (\(studyKey), 'enrolled', 'NA', true) RETURNING id, number
            """, logger: logger
        ).decode((Int64, Int64).self) { (participantId, participantNumber) = (id, number) }
        var responseId: Int64?
        for try await id in try await connection.query(
            """
            INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint)
            VALUES (\(participantId), \(studyKey), \(activityId), 'rehearsal', '{}'::jsonb, \(data)::jsonb, 'rehearsal')
            RETURNING id
            """, logger: logger
        ).decode(Int64.self) { responseId = id }
        guard let participantId, let responseId else { throw NotStaged() }
        return (participantId, participantNumber, responseId)
    }

    /// PostgreSQL returned no id for a row it was asked to insert.
    package struct NotStaged: Error {}
}
