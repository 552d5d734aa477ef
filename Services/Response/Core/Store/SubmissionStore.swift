import Foundation
import Logging
import PostgresNIO
import StudyModels

/// The responses that arrived from one participant, for registration's run states: which
/// activity and run each was for, when it arrived, and when and at which offset the app says it
/// was finished.
package struct SubmissionStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Newest first, at most `ParticipantSubmissions.limit`; none for a participant this study
    /// does not know by that hash.
    package func submissions(studyKey: String, appTokenSHA256: String, since: Date) async throws -> ParticipantSubmissions {
        let rows = try await client.query(
            """
            SELECT r.activity_id, r.activity_run_id, r.received_at, left(r.data->>'endTime', 40)
            FROM responses r
            WHERE r.participant_id = (
                SELECT id FROM participants WHERE study_key = \(studyKey) AND enrolled_token_sha256 = \(appTokenSHA256))
              AND r.received_at >= \(since)
            ORDER BY r.received_at DESC, r.id DESC LIMIT \(ParticipantSubmissions.limit)
            """, logger: logger)
        var found: [ParticipantSubmissions.Submission] = []
        for try await (activityId, runId, receivedAt, endTime) in rows.decode((String, String?, Date, String?).self) {
            let finished = endTime.flatMap(ResponseShredder.answerDateAndOffset)
            // A time of finishing after the response arrived (a phone's clock ahead) is not kept.
            let usable = finished.flatMap { $0.date <= receivedAt.addingTimeInterval(300) ? $0 : nil }
            found.append(.init(
                activityId: activityId, runId: runId, receivedAt: receivedAt, finishedAt: usable?.date, offsetMinutes: usable?.offsetMinutes))
        }
        return ParticipantSubmissions(submissions: found)
    }
}
