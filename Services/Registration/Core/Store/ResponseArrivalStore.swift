import Foundation
import Logging
import PostgresNIO
import StudyModels

/// Keeps the responses that arrived, read from the response service's feed
/// (`response_arrivals`), and where the feed is read on from (`response_feed_position`).
package struct ResponseArrivalStore: Sendable {
    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// What one reading of the feed did.
    package struct Reading: Sendable, Equatable {
        /// Responses kept that were not kept before.
        package var kept: Int
        /// Whether the position moved on (a page of settled responses was read past).
        package var moved: Bool
    }

    /// Reads the page after the kept position with `fetch` and keeps it, in one transaction that
    /// holds the position's row: replicas take turns, and a page is kept whole or not at all.
    /// Each participant a new response is from is marked to be counted again.
    package func read(_ fetch: @Sendable (Int64) async throws -> SubmissionFeed) async throws -> Reading {
        try await client.withTransaction(logger: logger) { connection in
            var position: Int64?
            for try await settled in try await connection.query(
                "SELECT settled_through FROM response_feed_position WHERE feed = 'responses' FOR UPDATE SKIP LOCKED", logger: logger
            ).decode(Int64.self) { position = settled }
            // Another replica holds the position: it reads this turn.
            guard let position else { return Reading(kept: 0, moved: false) }
            let page = try await fetch(position)
            var kept = 0
            if !page.submissions.isEmpty {
                var rows = ArrivalRows()
                for submission in page.submissions { rows.append(submission) }
                for try await count in try await connection.query(rows.statement, logger: logger).decode(Int.self) { kept = count }
            }
            // A page from a service that went backwards (restored from an older backup) leaves the
            // position where it is.
            let moved = page.settledThrough > position
            try await connection.query(
                """
                UPDATE response_feed_position SET settled_through = \(max(position, page.settledThrough)), read_at = now()
                WHERE feed = 'responses'
                """, logger: logger)
            return Reading(kept: kept, moved: moved)
        }
    }
}

extension ResponseArrivalStore {
    /// Reads the settlement feed's page after its kept position with `fetch` and keeps the latest
    /// settlement of each response (docs/registration-api.md, Responses that could not be
    /// stored), as `read` does the arrivals: one transaction holding the position's row. The
    /// participants of the arrivals a settlement changes are counted again.
    package func readSettlements(_ fetch: @Sendable (Int64) async throws -> SettlementFeed) async throws -> Reading {
        try await client.withTransaction(logger: logger) { connection in
            var position: Int64?
            for try await settled in try await connection.query(
                "SELECT settled_through FROM response_feed_position WHERE feed = 'settlements' FOR UPDATE SKIP LOCKED",
                logger: logger
            ).decode(Int64.self) { position = settled }
            guard let position else { return Reading(kept: 0, moved: false) }
            let page = try await fetch(position)
            var kept = 0
            if !page.settlements.isEmpty {
                let ids = page.settlements.map(\.responseId), numbers = page.settlements.map(\.number)
                let stored = page.settlements.map(\.stored)
                for try await count in try await connection.query(
                    """
                    WITH input AS (
                        SELECT DISTINCT ON (id) id, number, stored
                        FROM unnest(\(ids)::bigint[], \(numbers)::bigint[], \(stored)::boolean[]) AS t(id, number, stored)
                        ORDER BY id, number DESC
                    ), kept AS (
                        INSERT INTO response_settlements (response_id, number, stored)
                        SELECT id, number, stored FROM input
                        ON CONFLICT (response_id) DO UPDATE SET number = EXCLUDED.number, stored = EXCLUDED.stored
                        WHERE response_settlements.number < EXCLUDED.number
                        RETURNING response_id
                    ), recounted AS (
                        INSERT INTO participant_run_ledgers (user_id, study_id, recount_at)
                        SELECT DISTINCT ps.user_id, ps.study_id, now()
                        FROM kept k JOIN response_arrivals a ON a.response_id = k.response_id
                        JOIN participant_studies ps
                            ON ps.study_id = a.study_id AND ps.participant_token_hash = a.participant_token_hash
                        WHERE ps.enrolled_at IS NOT NULL
                        ON CONFLICT (user_id, study_id) DO UPDATE SET recount_at = least(participant_run_ledgers.recount_at, now())
                    )
                    SELECT count(*)::int FROM kept
                    """, logger: logger
                ).decode(Int.self) { kept = count }
            }
            let moved = page.settledThrough > position
            try await connection.query(
                """
                UPDATE response_feed_position SET settled_through = \(max(position, page.settledThrough)), read_at = now()
                WHERE feed = 'settlements'
                """, logger: logger)
            return Reading(kept: kept, moved: moved)
        }
    }
}

/// A page's arrivals as arrays, one statement for all of them: the new ones kept, and the
/// participants they are from (those registration knows by the hash) marked to be counted again.
/// Arrays of optionals cannot be bound: an empty text stands for none.
struct ArrivalRows {
    var ids: [Int64] = []
    var studies: [String] = []
    var hashes: [String] = []
    var activities: [String] = []
    var runs: [String] = []
    var received: [Date] = []
    var finished: [String] = []
    var offsets: [String] = []
    var dates: [String] = []

    mutating func append(_ submission: SubmissionFeed.Submission) {
        ids.append(submission.responseId)
        studies.append(submission.studyId)
        hashes.append(submission.participantTokenSHA256.lowercased())
        activities.append(submission.activityId)
        runs.append(submission.runId.flatMap(ResponseArrival.runNumber).map(String.init) ?? "")
        received.append(submission.receivedAt)
        finished.append(submission.finishedAt.map(GregorianDays.text) ?? "")
        // An offset no zone has is not kept (the number came from a phone).
        offsets.append(submission.offsetMinutes.flatMap { (-1_080...1_080).contains($0) ? String($0) : nil } ?? "")
        dates.append(Self.dateAnswers(submission.dateAnswers))
    }

    /// The date answers as a JSON object, those within the feed's bounds only (empty for none).
    static func dateAnswers(_ answers: [String: String]?) -> String {
        let kept = (answers ?? [:]).filter(ParticipantAnchors.isKeptDate)
        guard !kept.isEmpty, kept.count <= SubmissionFeed.Submission.maxDateAnswers else { return "" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(kept)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    var statement: PostgresQuery {
        """
        WITH input AS (
            SELECT * FROM unnest(\(ids)::bigint[], \(studies)::text[], \(hashes)::text[], \(activities)::text[], \(runs)::text[],
                                 \(received)::timestamptz[], \(finished)::text[], \(offsets)::text[], \(dates)::text[])
                AS t(id, study, hash, activity, run, received, finished, off, dates)
        ), kept AS (
            INSERT INTO response_arrivals (response_id, study_id, participant_token_hash, activity_id, run_id, received_at,
                                           finished_at, offset_minutes, date_answers)
            SELECT id, study, hash, activity, NULLIF(run, '')::integer, received, NULLIF(finished, '')::timestamptz,
                   NULLIF(off, '')::integer, NULLIF(dates, '')::jsonb
            FROM input
            ON CONFLICT (response_id) DO NOTHING
            RETURNING study_id, participant_token_hash
        ), recounted AS (
            INSERT INTO participant_run_ledgers (user_id, study_id, recount_at)
            SELECT DISTINCT ps.user_id, ps.study_id, now()
            FROM kept k JOIN participant_studies ps
                ON ps.study_id = k.study_id AND ps.participant_token_hash = k.participant_token_hash
            WHERE ps.enrolled_at IS NOT NULL
            ON CONFLICT (user_id, study_id) DO UPDATE SET recount_at = least(participant_run_ledgers.recount_at, now())
        )
        SELECT count(*)::int FROM kept
        """
    }
}
