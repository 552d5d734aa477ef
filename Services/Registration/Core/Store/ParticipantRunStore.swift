import Foundation
import Logging
import PostgresNIO
import StudyModels

/// What registration knows of a participant that their runs depend on: their enrolment, their
/// device, the runs their app reported completed (`participant_run_completions`), the
/// responses of theirs that arrived (`response_arrivals`), and the dates their anchored schedules
/// count from.
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

        package init(userId: UUID, enrolledAt: Date? = nil, withdrawnAt: Date? = nil, deviceOS: String? = nil, appTokenSHA256: String? = nil) {
            self.userId = userId
            self.enrolledAt = enrolledAt
            self.withdrawnAt = withdrawnAt
            self.deviceOS = deviceOS
            self.appTokenSHA256 = appTokenSHA256
        }
    }

    /// The participant a study's admin API names by `participantId` (its pseudonym).
    package func participant(studyId: String, participantId: UUID) async throws -> Participant? {
        try await first(
            client.query(
                """
                SELECT \(unescaped: Self.columns) FROM participant_studies ps
                WHERE ps.study_id = \(studyId) AND ps.pseudonym = \(participantId)
                """, logger: logger))
    }

    /// The participant registration knows by their account.
    package func participant(studyId: String, userId: UUID) async throws -> Participant? {
        try await first(
            client.query(
                """
                SELECT \(unescaped: Self.columns) FROM participant_studies ps
                WHERE ps.study_id = \(studyId) AND ps.user_id = \(userId)
                """, logger: logger))
    }

    private static let columns = """
        ps.user_id, ps.enrolled_at, ps.withdrawn_at,
        (SELECT s.device_os FROM participant_sessions s
         WHERE s.user_id = ps.user_id AND s.device_os IN ('ios', 'android')
         ORDER BY s.last_used_at DESC LIMIT 1),
        ps.participant_token_hash
        """

    private func first(_ rows: PostgresRowSequence) async throws -> Participant? {
        for try await (userId, enrolledAt, withdrawnAt, deviceOS, tokenHash) in rows.decode((UUID, Date?, Date?, String?, String?).self) {
            return Participant(userId: userId, enrolledAt: enrolledAt, withdrawnAt: withdrawnAt, deviceOS: deviceOS, appTokenSHA256: tokenHash)
        }
        return nil
    }

    /// The most completions, and the most arrivals, one count reads: far more than a year of a
    /// dozen activities with a dozen windows a day.
    package static let maxCompletions = 200_000

    /// The runs their app reported completed in the study, at or after `since` (a completion
    /// names its run, or arrived while it was open, so earlier ones name no run after it).
    package func completions(userId: UUID, studyId: String, since: Date) async throws -> [RunCompletion] {
        let rows = try await client.query(
            """
            SELECT activity_id, run_id, completed_at FROM participant_run_completions
            WHERE user_id = \(userId) AND study_id = \(studyId) AND completed_at >= \(since)
            ORDER BY completed_at LIMIT \(Self.maxCompletions)
            """, logger: logger)
        var found: [RunCompletion] = []
        for try await (activityId, runId, at) in rows.decode((String, Int, Date).self) {
            found.append(RunCompletion(activityId: activityId, runId: runId, source: .app, at: at))
        }
        return found
    }

    /// The responses of theirs that arrived at or after `since`, newest first, each saying whether
    /// its answers are stored (a failure the settlement feed reported); none for a participant
    /// whose app has not reported the id it holds.
    package func arrivals(studyId: String, appTokenSHA256: String?, since: Date) async throws -> [ResponseArrival] {
        guard let appTokenSHA256 else { return [] }
        let rows = try await client.query(
            """
            SELECT a.activity_id, a.run_id, a.received_at, a.finished_at, a.offset_minutes, coalesce(s.stored, true)
            FROM response_arrivals a LEFT JOIN response_settlements s ON s.response_id = a.response_id
            WHERE a.study_id = \(studyId) AND a.participant_token_hash = \(appTokenSHA256) AND a.received_at >= \(since)
            ORDER BY a.received_at DESC LIMIT \(Self.maxCompletions)
            """, logger: logger)
        var found: [ResponseArrival] = []
        for try await (activityId, runId, receivedAt, finishedAt, offset, stored) in rows.decode((String, Int?, Date, Date?, Int?, Bool).self) {
            found.append(ResponseArrival(
                activityId: activityId, runId: runId, receivedAt: receivedAt, finishedAt: finishedAt, offsetMinutes: offset,
                stored: stored))
        }
        return found
    }

    /// The dates of theirs that anchored schedules count from: the newest answer to each date
    /// question of each activity (by the order responses were stored), and the date properties
    /// the response service sent. Keys and activities are lowercased, as the response service
    /// matches them.
    package func anchors(studyId: String, appTokenSHA256: String?) async throws -> ParticipantAnchors {
        guard let appTokenSHA256 else { return ParticipantAnchors() }
        var anchors = ParticipantAnchors()
        let answers = try await client.query(
            """
            SELECT DISTINCT ON (lower(a.activity_id), lower(d.key)) lower(a.activity_id), lower(d.key), d.value
            FROM response_arrivals a CROSS JOIN LATERAL jsonb_each_text(a.date_answers) d
            WHERE a.study_id = \(studyId) AND a.participant_token_hash = \(appTokenSHA256) AND a.date_answers IS NOT NULL
            ORDER BY lower(a.activity_id), lower(d.key), a.response_id DESC
            """, logger: logger)
        for try await (activity, key, value) in answers.decode((String, String, String).self) {
            if let day = ParticipantAnchors.day(value) { anchors.answers[activity, default: [:]][key] = day }
        }
        let properties = try await client.query(
            """
            SELECT d.key, d.value FROM participant_property_dates p CROSS JOIN LATERAL jsonb_each_text(p.dates) d
            WHERE p.study_id = \(studyId) AND p.participant_token_hash = \(appTokenSHA256)
            """, logger: logger)
        for try await (key, value) in properties.decode((String, String).self) {
            if let day = ParticipantAnchors.day(value) { anchors.properties[key.lowercased()] = day }
        }
        return anchors
    }
}
