import Foundation
import Logging
import PostgresNIO
import StudyModels

/// What registration knows of a participant that their runs depend on, and the completions of
/// their runs (`participant_run_completions`).
package struct ParticipantRunStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    package struct Participant: Sendable, Equatable {
        package var userId: UUID
        /// nil until they enrolled.
        package var enrolledAt: Date?
        package var withdrawnAt: Date?
        /// The platform of the device they signed in on last (`ios`, `android`), if any said.
        package var deviceOS: String?
        /// SHA-256 of the participant id their app holds, once it reported it: how the response
        /// service knows them.
        package var appTokenSHA256: String?
    }

    /// The participant a study's admin API names by `participantId` (its pseudonym).
    package func participant(studyId: String, participantId: UUID) async throws -> Participant? {
        let rows = try await client.query(
            """
            SELECT ps.user_id, ps.enrolled_at, ps.withdrawn_at,
                (SELECT s.device_os FROM participant_sessions s
                 WHERE s.user_id = ps.user_id AND s.device_os IN ('ios', 'android')
                 ORDER BY s.last_used_at DESC LIMIT 1),
                ps.participant_token_hash
            FROM participant_studies ps
            WHERE ps.study_id = \(studyId) AND ps.pseudonym = \(participantId)
            """, logger: logger)
        for try await (userId, enrolledAt, withdrawnAt, deviceOS, tokenHash) in rows.decode((UUID, Date?, Date?, String?, String?).self) {
            return Participant(userId: userId, enrolledAt: enrolledAt, withdrawnAt: withdrawnAt, deviceOS: deviceOS, appTokenSHA256: tokenHash)
        }
        return nil
    }

    /// The most completions one request reads: far more than a year of a dozen activities with a
    /// dozen windows a day.
    package static let maxCompletions = 200_000

    /// The participant's completions in the study that arrived at or after `since` (a completion
    /// names its run, or arrived while it was open, so earlier ones name no run in the window).
    package func completions(userId: UUID, studyId: String, since: Date) async throws -> [RunCompletion] {
        let rows = try await client.query(
            """
            SELECT activity_id, run_id, source, completed_at FROM participant_run_completions
            WHERE user_id = \(userId) AND study_id = \(studyId) AND completed_at >= \(since)
            ORDER BY completed_at LIMIT \(Self.maxCompletions)
            """, logger: logger)
        var found: [RunCompletion] = []
        for try await (activityId, runId, source, at) in rows.decode((String, Int, String, Date).self) {
            guard let source = RunCompletion.Source(rawValue: source) else { continue }
            found.append(RunCompletion(activityId: activityId, runId: runId, source: source, at: at))
        }
        return found
    }
}
