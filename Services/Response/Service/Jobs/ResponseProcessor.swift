import Foundation
import Logging
import PostgresNIO
import ServiceKit
import ServiceLifecycle
import StudyModels
import Synchronization

/// Processes pending responses into the study's tables (docs/response-api.md, Processing into tables): the
/// activity version's design is fetched and applied first (outside any transaction), then the
/// response is claimed with `FOR UPDATE SKIP LOCKED` and stored in one transaction with its status
/// change, so any number of replicas share the queue, and a worker that dies mid-way leaves
/// nothing half-stored: its transaction rolls back and the response is still pending.
/// A response the rules reject is marked `error` with the original's message; one whose design
/// cannot be fetched now stays pending and is tried again later (backoff), while the responses
/// behind it go on.
struct ResponseProcessor: Service {
    static let maxErrorLength = 977

    let client: PostgresClient
    let designs: DesignSource
    let tables: StudyTables
    let writer: ResponseWriter
    let pollInterval: Duration
    let isReady: @Sendable () -> Bool
    let metrics: ServiceMetrics
    let logger: Logger
    /// The study served last: a hint for taking turns, not state (another replica has its own).
    let turn = StudyTurn()

    func run() async throws {
        await QueueDrain.run("response processing", pollInterval: pollInterval, isReady: isReady, logger: logger) {
            try await processNext()
        }
    }

    /// Processes the oldest due pending response; false when there is none.
    ///
    /// The design is made ready first, outside any transaction (it may take a call to
    /// study-metadata, and no row lock or transaction should wait on the network); then the
    /// response is claimed and stored in one transaction.
    ///
    /// Studies take turns: the next response is the oldest due one of the first study after the
    /// one served last (by key, wrapping round), so a study with a large backlog gets one response
    /// in turn with every other study that has any, instead of holding the worker until it drains.
    @discardableResult
    func processNext() async throws -> Bool {
        let last = turn.last ?? ""
        // The second branch runs only when the first finds nothing (Append stops at the LIMIT).
        let due = try await client.query(
            """
            (SELECT r.id, r.study_key, s.study_id, r.activity_id, r.activity_version, r.attempts
             FROM responses r JOIN studies s ON s.study_key = r.study_key
             WHERE r.status = 'pending' AND r.next_attempt_at <= now() AND r.study_key > \(last)
             ORDER BY r.study_key, r.id LIMIT 1)
            UNION ALL
            (SELECT r.id, r.study_key, s.study_id, r.activity_id, r.activity_version, r.attempts
             FROM responses r JOIN studies s ON s.study_key = r.study_key
             WHERE r.status = 'pending' AND r.next_attempt_at <= now()
             ORDER BY r.study_key, r.id LIMIT 1)
            LIMIT 1
            """, logger: logger)
        var next: (Int64, String, String, String, String, Int)?
        for try await row in due.decode((Int64, String, String, String, String, Int).self) { next = row }
        guard let (id, studyKey, studyId, activityId, version, attempts) = next else { return false }
        turn.last = studyKey
        var logger = self.logger
        logger[metadataKey: "response_id"] = "\(id)"
        do {
            try await designs.ensureApplied(studyKey: studyKey, studyId: studyId, activityId: activityId, version: version)
        } catch let error as DesignSource.Unavailable {
            // Later, without holding up the responses behind it.
            let wait = OutboxWorker.Policy().backoff(afterAttempts: attempts + 1).components
            try await client.query(
                """
                UPDATE responses SET attempts = attempts + 1, error_message = \(error.description),
                    next_attempt_at = now() + make_interval(secs => \(Double(wait.seconds)))
                WHERE id = \(id) AND status = 'pending'
                """, logger: logger)
            logger.warning("design unavailable; the response waits", metadata: ["error": "\(error)"])
            count("deferred")
            return true
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try await client.query(
                """
                UPDATE responses SET status = 'error', error_message = \(Self.message(error)), processed_at = now()
                WHERE id = \(id) AND status = 'pending'
                """, logger: logger)
            count("error")
            return true
        }
        if let outcome = try await store(id, logger: logger) { count(outcome) }
        return true
    }

    private func count(_ outcome: String) {
        metrics.countWorkerOutcome(
            worker: "response", event: "processing", outcome: outcome,
            help: "Responses processed into the study tables, by outcome (processed, error, deferred).")
    }

    /// Claims response `id` (unless another worker has it) and stores it with its status change;
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
            } catch is CancellationError {
                throw CancellationError()  // shutting down: roll back, the response stays pending
            } catch {
                // Nothing of this response stays in the study's tables.
                try await connection.query("ROLLBACK TO SAVEPOINT store_response", logger: logger)
                try await mark(id, status: "error", error: Self.message(error), on: connection)
                logger.info("response rejected", metadata: ["error": "\(Self.message(error))"])
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

    /// The error as the original stored it: its message, truncated like the original's column.
    static func message(_ error: any Error) -> String {
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

/// Which study a processor served last.
final class StudyTurn: Sendable {
    private let key = Mutex<String?>(nil)

    var last: String? {
        get { key.withLock { $0 } }
        set { key.withLock { $0 = newValue } }
    }
}
