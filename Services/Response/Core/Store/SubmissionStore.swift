import Foundation
import Logging
import PostgresNIO
import StudyModels

/// The responses stored, in id order, for registration's run states: which participant,
/// activity and run each was for, when it arrived, and when and at which offset the app says it
/// was finished, and the dates it answered (`SubmissionFeed`).
package struct SubmissionStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// The page after response `after`: at most `SubmissionFeed.pageSize` responses by id (the
    /// primary key's index), those from participants without an app token (the schema app's,
    /// Sage's) read past but not listed.
    package func page(after: Int64) async throws -> SubmissionFeed {
        let rows = try await client.query(
            """
            SELECT r.id, s.study_id, p.enrolled_token_sha256, r.activity_id, r.activity_run_id, r.received_at,
                   left(r.data->>'endTime', 40),
                   r.received_at < now() - make_interval(secs => \(SubmissionFeed.settleSeconds)),
                   jsonb_path_query_array(r.data, 'lax $.results.** ? (@.resultType == "date")')::text
            FROM (SELECT id, participant_id, activity_id, activity_run_id, received_at, data FROM responses
                  WHERE id > \(after) ORDER BY id LIMIT \(SubmissionFeed.pageSize)) r
            LEFT JOIN participants p ON p.id = r.participant_id
            LEFT JOIN studies s ON s.study_key = p.study_key
            ORDER BY r.id
            """, logger: logger)
        var found: [SubmissionFeed.Submission] = []
        var settledThrough = after
        var settling = true
        for try await (id, studyId, hash, activityId, runId, receivedAt, endTime, settled, dates) in rows.decode(
            (Int64, String?, String?, String, String?, Date, String?, Bool, String?).self)
        {
            // The position moves only over responses old enough that none of a smaller id can
            // still commit.
            if settling, settled { settledThrough = id } else { settling = false }
            guard let studyId, let hash else { continue }
            let finished = endTime.flatMap(ResponseShredder.answerDateAndOffset)
            // A time of finishing after the response arrived (a phone's clock ahead) is not kept.
            let usable = finished.flatMap { $0.date <= receivedAt.addingTimeInterval(300) ? $0 : nil }
            found.append(.init(
                responseId: id, studyId: studyId, participantTokenSHA256: hash, activityId: activityId, runId: runId,
                receivedAt: receivedAt, finishedAt: usable?.date, offsetMinutes: usable?.offsetMinutes,
                dateAnswers: dates.flatMap { try? JSONValue.parse($0.utf8, budget: .storedValue(bytes: $0.utf8.count)) }.flatMap(DateAnswers.from)))
        }
        return SubmissionFeed(submissions: found, settledThrough: settledThrough)
    }

    /// The settlements numbered after `after` (docs/response-api.md, Settlements), at most
    /// `SettlementFeed.pageSize`, in number order (the partial index of the numbered ones).
    package func settlements(after: Int64) async throws -> SettlementFeed {
        let rows = try await client.query(
            """
            SELECT id, settled_seq, status IN ('processed', 'forwarded'),
                   settled_at < now() - make_interval(secs => \(SubmissionFeed.settleSeconds))
            FROM responses WHERE settled_seq > \(after)
            ORDER BY settled_seq LIMIT \(SettlementFeed.pageSize)
            """, logger: logger)
        var found: [SettlementFeed.Settlement] = []
        var settledThrough = after
        var settling = true
        for try await (id, number, stored, settled) in rows.decode((Int64, Int64, Bool, Bool).self) {
            // The position moves only over numbers old enough that none smaller can still commit.
            if settling, settled { settledThrough = number } else { settling = false }
            found.append(.init(responseId: id, number: number, stored: stored))
        }
        return SettlementFeed(settlements: found, settledThrough: settledThrough)
    }
}
