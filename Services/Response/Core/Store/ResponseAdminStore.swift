import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// What researchers see of and do to stored responses: their states, and reprocessing of those
/// that failed (docs/response-api.md, Admin API).
package struct ResponseAdminStore: Sendable {
    package static let statuses: Set<String> = ["pending", "processed", "error", "forwarded"]

    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, logger: Logger) {
        self.client = client
        self.audit = audit
        self.logger = logger
    }

    /// Which responses a list shows.
    package struct Filter: Sendable {
        package var status: String?
        package var participant: Int64?
        /// One activity, its id in any case.
        package var activity: String?
        /// The participant by the SHA-256 of their app token (what registration knows them by),
        /// kept after withdrawal unless their data was deleted.
        package var appTokenSHA256: String?

        package init(status: String? = nil, participant: Int64? = nil, activity: String? = nil, appTokenSHA256: String? = nil) {
            self.status = status
            self.participant = participant
            self.activity = activity
            self.appTokenSHA256 = appTokenSHA256
        }
    }

    /// Up to `limit` responses with ids above `after`, oldest first, filtered.
    package func list(studyKey: String, filter: Filter, after: Int64, limit: Int) async throws -> [ResponseSummary] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.summaryColumns)
            FROM responses r JOIN participants p ON p.id = r.participant_id
            WHERE r.study_key = \(studyKey) AND r.id > \(after)
              AND (\(filter.status)::text IS NULL OR r.status = \(filter.status))
              AND (\(filter.participant)::bigint IS NULL OR r.participant_id = (
                  SELECT id FROM participants WHERE study_key = \(studyKey) AND number = \(filter.participant)))
              AND (\(filter.activity)::text IS NULL OR lower(r.activity_id) = lower(\(filter.activity)))
              AND (\(filter.appTokenSHA256)::text IS NULL OR r.participant_id = (
                  SELECT id FROM participants WHERE study_key = \(studyKey) AND enrolled_token_sha256 = \(filter.appTokenSHA256)))
            ORDER BY r.id LIMIT \(limit)
            """, logger: logger)
        return try await Self.summaries(rows)
    }

    /// What a `ResponseSummary` is read from, for responses `r` of participants `p`.
    static let summaryColumns = """
        r.id, p.number, r.activity_id, r.activity_version, r.status, r.error_message, r.received_at, r.processed_at,
        r.attempts, r.forward_attempts, r.forward_error, r.forwarded_at, r.design_version
        """

    static func summaries(_ rows: PostgresRowSequence) async throws -> [ResponseSummary] {
        var found: [ResponseSummary] = []
        for try await (id, participant, activity, version, state, error, received, processed, attempts, forwardAttempts, forwardError, forwarded,
            designVersion)
            in rows.decode((Int64, Int64, String, String, String, String?, Date, Date?, Int, Int, String?, Date?, String?).self)
        {
            found.append(
                ResponseSummary(
                    id: id, participantId: participant, activityId: activity, version: version, status: state,
                    errorMessage: error, receivedAt: received, processedAt: processed, attempts: attempts, forwardAttempts: forwardAttempts,
                    forwardError: forwardError, forwardedAt: forwarded, processedAgainstVersion: designVersion))
        }
        return found
    }

    /// A participant of the study as the data knows them: the row their responses hang on, their
    /// number, and the hash linking them to registration's record (nil once the link is gone, or
    /// when they enrolled with a token alone).
    package struct ParticipantRow: Sendable, Equatable {
        package var id: Int64
        package var number: Int64
        package var appTokenSHA256: String?
    }

    /// Participant `number` of the study; nil when it has none by that number.
    package func participant(studyKey: String, number: Int64) async throws -> ParticipantRow? {
        try await participantRow(
            client.query(
                "SELECT id, number, enrolled_token_sha256 FROM participants WHERE study_key = \(studyKey) AND number = \(number)",
                logger: logger))
    }

    /// The participant of the study whose app's participant id hashes to `appTokenSHA256`; nil
    /// when no data has arrived from such an app.
    package func participant(studyKey: String, appTokenSHA256: String) async throws -> ParticipantRow? {
        try await participantRow(
            client.query(
                """
                SELECT id, number, enrolled_token_sha256 FROM participants
                WHERE study_key = \(studyKey) AND enrolled_token_sha256 = \(appTokenSHA256) ORDER BY number LIMIT 1
                """, logger: logger))
    }

    private func participantRow(_ rows: PostgresRowSequence) async throws -> ParticipantRow? {
        for try await (id, number, hash) in rows.decode((Int64, Int64, String?).self) {
            return ParticipantRow(id: id, number: number, appTokenSHA256: hash)
        }
        return nil
    }

    /// The participant's latest `limit` responses, oldest first (read newest first on their index).
    package func latestResponses(studyKey: String, of participant: ParticipantRow, limit: Int) async throws -> [ResponseSummary] {
        let rows = try await client.query(
            """
            SELECT \(unescaped: Self.summaryColumns)
            FROM responses r JOIN participants p ON p.id = r.participant_id
            WHERE r.participant_id = \(participant.id) AND r.study_key = \(studyKey)
            ORDER BY r.id DESC LIMIT \(limit)
            """, logger: logger)
        return try await Self.summaries(rows).reversed()
    }

    /// How many of the study's responses failed processing (`error`), per activity that has any.
    package func failedByActivity(studyKey: String) async throws -> [String: Int] {
        let rows = try await client.query(
            """
            SELECT activity_id, count(*)::int FROM responses WHERE study_key = \(studyKey) AND status = 'error'
            GROUP BY activity_id
            """, logger: logger)
        var counts: [String: Int] = [:]
        for try await (activity, count) in rows.decode((String, Int).self) { counts[activity, default: 0] += count }
        return counts
    }

    /// Puts the study's `error` responses among `ids` back in the queue; the whole algorithm,
    /// design included, runs again, against `againstVersion` of each one's activity when given
    /// (nil: the version it was sent for). Any other id (processed, someone else's) is refused.
    package func reprocess(_ ids: [Int64], studyKey: String, actor: String, againstVersion: String? = nil) async throws
        -> ReprocessOutcome
    {
        try await client.withTransaction(logger: logger) { connection in
            var reprocessed: Set<Int64> = []
            for try await id in try await connection.query(
                """
                UPDATE responses SET status = 'pending', error_message = NULL, processed_at = NULL, attempts = 0,
                    next_attempt_at = now(), design_version = \(againstVersion)
                WHERE study_key = \(studyKey) AND status = 'error' AND id = ANY(\(ids))
                RETURNING id
                """, logger: logger
            ).decode(Int64.self) { reprocessed.insert(id) }
            if !reprocessed.isEmpty {
                var details = ["ids": reprocessed.sorted().map(String.init).joined(separator: ",")]
                details["againstVersion"] = againstVersion
                try await audit.record(
                    actor: actor, action: "responses.reprocessed", studyId: studyKey, details: details, on: connection)
            }
            return ReprocessOutcome(
                countReprocessed: reprocessed.count,
                notReprocessed: Array(Set(ids).subtracting(reprocessed)).sorted())
        }
    }

    /// The activities of the study's `error` responses among `ids`, each once.
    package func failedActivities(_ ids: [Int64], studyKey: String) async throws -> [String] {
        var activities: [String] = []
        for try await activity in try await client.query(
            """
            SELECT DISTINCT activity_id FROM responses
            WHERE study_key = \(studyKey) AND status = 'error' AND id = ANY(\(ids)) ORDER BY activity_id
            """, logger: logger
        ).decode(String.self) { activities.append(activity) }
        return activities
    }

    /// Responses received per UTC day and activity, from `days - 1` days before today: the counts
    /// kept as responses come and go (`study_response_days`, response migration 34), so the cost
    /// is the days asked for, not the responses in them.
    package func daily(studyKey: String, days: Int, now: Date = .now) async throws -> DailyResponses {
        let today = UTCDay.start(of: now)
        let from = UTCDay.start(of: today, offset: -(days - 1))
        var byActivity: [String: [DailyResponses.Day]] = [:]
        for try await (activity, day, count) in try await client.query(
            """
            SELECT activity_id, to_char(day, 'YYYY-MM-DD'), sum(responses)::int
            FROM study_response_days WHERE study_key = \(studyKey) AND day >= \(UTCDay.string(from))::date
            GROUP BY activity_id, day HAVING sum(responses) > 0 ORDER BY activity_id, day
            """, logger: logger
        ).decode((String, String, Int).self) { byActivity[activity, default: []].append(.init(date: day, count: count)) }
        return DailyResponses(
            from: UTCDay.string(from), to: UTCDay.string(today),
            activities: byActivity.keys.sorted().map { .init(activityId: $0, days: byActivity[$0] ?? []) })
    }

    /// The most hashes one lookup may name (a page of the participants list is 100 at most).
    package static let maxNumberLookups = 100

    /// The participant numbers of the study's enrolled apps whose participant id hashes to one of
    /// `hashes` (a withdrawn participant keeps theirs unless their data was deleted).
    package func participantNumbers(studyKey: String, hashes: [String]) async throws -> ParticipantNumbers {
        let rows = try await client.query(
            """
            SELECT number, enrolled_token_sha256 FROM participants
            WHERE study_key = \(studyKey) AND enrolled_token_sha256 = ANY(\(hashes)) ORDER BY number
            """, logger: logger)
        var found: [ParticipantNumbers.Entry] = []
        for try await (id, hash) in rows.decode((Int64, String).self) {
            found.append(.init(participantId: id, appTokenSHA256: hash))
        }
        return ParticipantNumbers(participants: found)
    }

    /// The participant `number` of the study with the hash that links them to the person; empty
    /// when the study has no such participant or the link is gone.
    package func participantNumber(studyKey: String, number: Int64) async throws -> ParticipantNumbers {
        let rows = try await client.query(
            """
            SELECT number, enrolled_token_sha256 FROM participants
            WHERE study_key = \(studyKey) AND number = \(number) AND enrolled_token_sha256 IS NOT NULL
            """, logger: logger)
        var found: [ParticipantNumbers.Entry] = []
        for try await (id, hash) in rows.decode((Int64, String).self) {
            found.append(.init(participantId: id, appTokenSHA256: hash))
        }
        return ParticipantNumbers(participants: found)
    }
}
