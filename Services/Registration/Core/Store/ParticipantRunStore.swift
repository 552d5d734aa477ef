import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// What registration knows of a participant that their runs depend on: their enrolment, their
/// device, the runs their app reported completed (`participant_run_completions`), the
/// responses of theirs that arrived (`response_arrivals`), and the dates their anchored schedules
/// count from.
package struct ParticipantRunStore: Sendable {
    package let client: PostgresClient
    /// Whether a pooler stands between (its statements then go unnamed).
    package let pooling: DatabaseSettings.Pooling
    package let logger: Logger

    package init(client: PostgresClient, pooling: DatabaseSettings.Pooling = .session, logger: Logger) {
        self.client = client
        self.pooling = pooling
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
        for try await (_, userId, enrolledAt, withdrawnAt, deviceOS, tokenHash) in try await client.run(
            RoundParticipantsStatement(studyIds: [studyId], userIds: [userId]), pooling: pooling, logger: logger)
        {
            return Participant(userId: userId, enrolledAt: enrolledAt, withdrawnAt: withdrawnAt, deviceOS: deviceOS, appTokenSHA256: tokenHash)
        }
        return nil
    }

    /// What is read of a participant with their enrolment.
    static let columns = """
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
        var found: [RunCompletion] = []
        for try await (_, activityId, runId, at) in try await client.run(
            RoundCompletionsStatement(
                userIds: [userId], studyIds: [studyId], since: [since], perParticipant: Self.maxCompletions, limit: Self.maxCompletions),
            pooling: pooling, logger: logger)
        {
            found.append(RunCompletion(activityId: activityId, runId: runId, source: .app, at: at))
        }
        return found
    }

    /// The responses of theirs that arrived at or after `since`, newest first, each saying whether
    /// its answers are stored (a failure the settlement feed reported); none for a participant
    /// whose app has not reported the id it holds.
    package func arrivals(studyId: String, appTokenSHA256: String?, since: Date) async throws -> [ResponseArrival] {
        guard let appTokenSHA256 else { return [] }
        var found: [ResponseArrival] = []
        for try await (_, activityId, runId, receivedAt, finishedAt, offset, stored) in try await client.run(
            RoundArrivalsStatement(
                studyIds: [studyId], tokenHashes: [appTokenSHA256], since: [since], perParticipant: Self.maxCompletions,
                limit: Self.maxCompletions),
            pooling: pooling, logger: logger)
        {
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
        for try await (_, activity, key, value) in try await client.run(
            RoundAnchorAnswersStatement(studyIds: [studyId], tokenHashes: [appTokenSHA256]), pooling: pooling, logger: logger)
        {
            if let day = ParticipantAnchors.day(value) { anchors.answers[activity, default: [:]][key] = day }
        }
        for try await (_, key, value) in try await client.run(
            RoundAnchorPropertiesStatement(studyIds: [studyId], tokenHashes: [appTokenSHA256]), pooling: pooling, logger: logger)
        {
            if let day = ParticipantAnchors.day(value) { anchors.properties[key.lowercased()] = day }
        }
        return anchors
    }
}
