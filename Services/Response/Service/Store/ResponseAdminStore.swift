import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// What researchers see of and do to stored responses: their states, and reprocessing of those
/// that failed (docs/response-api.md, Admin API).
struct ResponseAdminStore: Sendable {
    /// One response as the admin API lists it.
    struct Summary: Codable, Sendable, Equatable {
        var id: Int64
        var participantId: Int64
        var activityId: String
        var version: String
        var status: String
        var errorMessage: String?
        var receivedAt: Date
        var processedAt: Date?
        var forwardAttempts: Int
        var forwardError: String?
        var forwardedAt: Date?
    }

    struct Reprocessed: Codable, Sendable, Equatable {
        var countReprocessed: Int
        /// Ids asked for that are not this study's responses in `error`.
        var notReprocessed: [Int64]
    }

    static let statuses: Set<String> = ["pending", "processed", "error", "forwarded"]

    let client: PostgresClient
    let audit: AuditLog
    let logger: Logger

    /// Up to `limit` responses with ids above `after`, oldest first, optionally of one status.
    func list(studyKey: String, status: String?, after: Int64, limit: Int) async throws -> [Summary] {
        let rows = try await client.query(
            """
            SELECT id, participant_id, activity_id, activity_version, status, error_message, received_at, processed_at,
                   forward_attempts, forward_error, forwarded_at
            FROM responses WHERE study_key = \(studyKey) AND id > \(after) AND (\(status)::text IS NULL OR status = \(status))
            ORDER BY id LIMIT \(limit)
            """, logger: logger)
        var found: [Summary] = []
        for try await (id, participant, activity, version, state, error, received, processed, attempts, forwardError, forwarded)
            in rows.decode((Int64, Int64, String, String, String, String?, Date, Date?, Int, String?, Date?).self)
        {
            found.append(
                Summary(
                    id: id, participantId: participant, activityId: activity, version: version, status: state,
                    errorMessage: error, receivedAt: received, processedAt: processed, forwardAttempts: attempts,
                    forwardError: forwardError, forwardedAt: forwarded))
        }
        return found
    }

    /// Puts the study's `error` responses among `ids` back in the queue; the whole algorithm,
    /// design included, runs again. Any other id (processed, someone else's) is refused.
    func reprocess(_ ids: [Int64], studyKey: String, actor: String) async throws -> Reprocessed {
        try await client.withTransaction(logger: logger) { connection in
            var reprocessed: Set<Int64> = []
            for try await id in try await connection.query(
                """
                UPDATE responses SET status = 'pending', error_message = NULL, processed_at = NULL, attempts = 0,
                    next_attempt_at = now()
                WHERE study_key = \(studyKey) AND status = 'error' AND id = ANY(\(ids))
                RETURNING id
                """, logger: logger
            ).decode(Int64.self) { reprocessed.insert(id) }
            if !reprocessed.isEmpty {
                try await audit.record(
                    actor: actor, action: "responses.reprocessed", studyId: studyKey,
                    details: ["ids": reprocessed.sorted().map(String.init).joined(separator: ",")], on: connection)
            }
            return Reprocessed(
                countReprocessed: reprocessed.count,
                notReprocessed: Array(Set(ids).subtracting(reprocessed)).sorted())
        }
    }
}
