import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels
import Synchronization

/// Processes pending responses into the study's tables (docs/response-api.md, Processing into
/// tables), as a work queue. A response is claimed with a lease (`FOR UPDATE SKIP LOCKED`, its
/// next attempt moved past the lease), its activity version's design is fetched and applied
/// (outside any transaction: it may take a call to study-metadata), and then it is stored in one
/// transaction with its status change, so any number of replicas share the queue and a worker
/// that dies mid-way leaves nothing half-stored: its transaction rolls back and the response is
/// claimed again once the lease ends. A response the rules reject is marked `error` with the
/// original's message; one whose design cannot be fetched now is tried again later (backoff,
/// never given up), while the responses behind it go on.
///
/// Studies take turns: the next response is the oldest due one of the first study after the one
/// served last (by key, wrapping round), so a study with a large backlog gets one response in
/// turn with every other study that has any, instead of holding the worker until it drains.
package final class ResponseProcessor: WorkQueue {
    package static let maxErrorLength = 977
    /// The lease outlasts a round's deadline (30 s, set where the worker is made) with a margin:
    /// a response claimed by a round that failed part-way (PostgreSQL went away) waits only that
    /// long before it is claimed again.
    package static let policy = DrainPolicy(batchSize: 10, lease: .seconds(45), retry: RetryPolicy(maxAttempts: nil))

    package struct Claimed: Sendable {
        package var id: Int64
        package var studyKey: String
        package var studyId: String
        package var activityId: String
        package var version: String
        package var attempts: Int
    }

    package let client: PostgresClient
    package let designs: DesignSource
    package let tables: StudyTables
    package let writer: ResponseWriter
    package let metrics: ServiceMetrics
    package let logger: Logger
    /// The study served last: a hint for taking turns, not state (another replica has its own).
    private let lastStudy = Mutex<String?>(nil)

    package init(
        client: PostgresClient, designs: DesignSource, tables: StudyTables, writer: ResponseWriter, metrics: ServiceMetrics,
        logger: Logger
    ) {
        self.client = client
        self.designs = designs
        self.tables = tables
        self.writer = writer
        self.metrics = metrics
        self.logger = logger
    }

    /// One round of the queue, as the worker runs it.
    package func round() async throws -> Int {
        try await drain("responses", policy: Self.policy, metrics: metrics, logger: logger)
    }

    /// Processes the next due response, if any; false when none was due (tests drive it so).
    @discardableResult
    package func processNext() async throws -> Bool {
        var one = Self.policy
        one.batchSize = 1
        return try await drain("responses", policy: one, metrics: metrics, logger: logger) > 0
    }

    package func claim(limit: Int, lease: Duration) async throws -> [Claimed] {
        var claimed: [Claimed] = []
        while claimed.count < limit, let next = try await claimNext(lease: lease) {
            claimed.append(next)
        }
        return claimed
    }

    /// Leases the oldest due response of the next study in turn.
    private func claimNext(lease: Duration) async throws -> Claimed? {
        let last = lastStudy.withLock { $0 }
        var next = try await claimOldest(afterStudy: last, lease: lease)
        if next == nil, last != nil { next = try await claimOldest(afterStudy: nil, lease: lease) }
        if let next { lastStudy.withLock { $0 = next.studyKey } }
        return next
    }

    private func claimOldest(afterStudy last: String?, lease: Duration) async throws -> Claimed? {
        let rows = try await client.query(
            """
            UPDATE responses SET attempts = attempts + 1, next_attempt_at = now() + make_interval(secs => \(lease.inSeconds))
            FROM (
                SELECT r.id FROM responses r
                WHERE r.status = 'pending' AND r.next_attempt_at <= now() AND r.study_key > \(last ?? "")
                ORDER BY r.study_key, r.id LIMIT 1
                FOR UPDATE SKIP LOCKED
            ) due, studies s
            WHERE responses.id = due.id AND s.study_key = responses.study_key
            RETURNING responses.id, responses.study_key, s.study_id, responses.activity_id, responses.activity_version,
                responses.attempts
            """, logger: logger)
        for try await (id, studyKey, studyId, activityId, version, attempts) in rows.decode(
            (Int64, String, String, String, String, Int).self)
        {
            return Claimed(
                id: id, studyKey: studyKey, studyId: studyId, activityId: activityId, version: version, attempts: attempts)
        }
        return nil
    }

    package func attempts(of response: Claimed) -> Int { response.attempts }

    /// The design is made ready first, outside any transaction; then the response is stored in
    /// one transaction. `done` carries the status it was given (nil: another worker had it).
    package func perform(_ response: Claimed) async -> WorkResult<String?> {
        var logger = self.logger
        logger[metadataKey: "response_id"] = "\(response.id)"
        do {
            try await designs.ensureApplied(
                studyKey: response.studyKey, studyId: response.studyId, activityId: response.activityId,
                version: response.version)
        } catch let error as DesignSource.Unavailable {
            return .failed(error.description)
        } catch {
            return Self.isRejection(error) ? .rejected(Self.message(error)) : .failed(String(reflecting: error))
        }
        do {
            return .done(try await store(response.id, logger: logger))
        } catch {
            return .failed(String(reflecting: error))
        }
    }

    /// Nothing left to record: `store` set the status in the transaction that stored the rows,
    /// so the two can never disagree.
    package func complete(_ response: Claimed, with status: String?) async throws {}

    /// `processed`; `rejected` when the rules refused it (as a design the rules refuse is).
    package func outcome(of status: String?) -> String {
        switch status {
        case "processed": "processed"
        case nil: "skipped"
        default: "rejected"
        }
    }

    /// A design that cannot be had now waits (`retryAfter`); one the rules refuse makes the
    /// response an `error`, with the original's message.
    package func fail(_ response: Claimed, reason: String, retryAfter: Duration?) async throws {
        if let retryAfter {
            try await client.query(
                """
                UPDATE responses SET error_message = \(reason),
                    next_attempt_at = now() + make_interval(secs => \(retryAfter.inSeconds))
                WHERE id = \(response.id) AND status = 'pending'
                """, logger: logger)
        } else {
            try await client.query(
                """
                UPDATE responses SET status = 'error', error_message = \(reason), processed_at = now()
                WHERE id = \(response.id) AND status = 'pending'
                """, logger: logger)
        }
    }

    /// Locks response `id` (unless another worker has it) and stores it with its status change;
    /// returns the status it was given, or nil when another worker had it.
    private func store(_ id: Int64, logger: Logger) async throws -> String? {
        try await client.withTransaction(logger: logger) { connection -> String? in
            let rows = try await connection.query(
                """
                SELECT r.participant_id, r.study_key, s.study_id, r.activity_id, r.data::text
                FROM responses r JOIN studies s ON s.study_key = r.study_key
                WHERE r.id = \(id) AND r.status = 'pending'
                FOR UPDATE OF r SKIP LOCKED
                """, logger: logger)
            var claimed: (Int64, String, String, String, String)?
            for try await row in rows.decode((Int64, String, String, String, String).self) { claimed = row }
            guard let (participantId, studyKey, studyId, activityId, dataText) = claimed else { return nil }
            try await connection.query("SAVEPOINT store_response", logger: logger)
            do {
                let (schema, lists) = try await tables.lists(studyKey: studyKey, on: connection)
                let data = try JSONDecoder().decode(JSONValue.self, from: Data(dataText.utf8))
                let plan = try ResponseShredder(lists: lists, container: studyId).plan(activityId: activityId, data: data)
                guard let schema else { throw ResponseShredder.Failure(description: "Invalid list '\(activityId)' for container '\(studyId)'") }
                try await writer.insert(plan, schema: schema, participantId: participantId, responseId: id, on: connection)
                try await mark(id, status: "processed", error: nil, on: connection)
                return "processed"
            } catch let rejection where Self.isRejection(rejection) {
                // Nothing of this response stays in the study's tables.
                try await connection.query("ROLLBACK TO SAVEPOINT store_response", logger: logger)
                try await mark(id, status: "error", error: Self.message(rejection), on: connection)
                logger.info("response rejected", metadata: ["error": "\(Self.message(rejection))"])
                return "error"
            }
        }
    }

    private func mark(_ id: Int64, status: String, error: String?, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE responses SET status = \(status), error_message = \(error), processed_at = now() WHERE id = \(id)
            """, logger: logger)
    }

    /// Whether `error` is the response's fault (stored as its error) rather than the moment's
    /// (a lost connection, shutting down: the transaction rolls back and the response is tried again).
    package static func isRejection(_ error: any Error) -> Bool {
        switch error {
        case is ResponseShredder.Failure, is SurveySchema.DesignError, is DecodingError: true
        case let postgres as PSQLError:
            // The server refused this response's values (a number out of range, say); not the
            // classes that mean the moment was wrong: connection (08), transaction rollback (40),
            // resources (53), operator intervention such as a shutdown (57), system errors (58).
            postgres.serverInfo?[.sqlState].map { !["08", "40", "53", "57", "58"].contains(String($0.prefix(2))) } ?? false
        default: false
        }
    }

    /// The error as the original stored it: its message, truncated like the original's column.
    package static func message(_ error: any Error) -> String {
        let text: String =
            switch error {
            case let failure as ResponseShredder.Failure: failure.description
            case let design as SurveySchema.DesignError: design.description
            case is DecodingError: "Unable to parse the stored response"
            default: "\(error)"
            }
        return text.count > maxErrorLength ? String(text.prefix(maxErrorLength)) + "... (message truncated)" : text
    }
}
