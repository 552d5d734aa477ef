import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Responses moved in from a MyStudies deployment (docs/moving-in.md): stored as a response that
/// arrived then, from the participant whose app's participant id hashes to the one given (moved
/// in before them, withdrawn since or not), and processed into the study's tables like any other.
/// The source's identity of each response is its replay key, so storing it again changes nothing.
package struct MovedResponseStore: Sendable {
    package struct Row: Sendable {
        /// The SHA-256 (hex) of the participant id the app sent it with.
        package var participantTokenHash: String
        package var activityId: String
        package var activityVersion: String
        package var activityRunId: String?
        package var metadata: String
        package var data: String
        /// Derived from the response's identity at the source.
        package var replayKey: String
        package var receivedAt: Date

        package init(
            participantTokenHash: String, activityId: String, activityVersion: String, activityRunId: String?, metadata: String, data: String,
            replayKey: String, receivedAt: Date
        ) {
            self.participantTokenHash = participantTokenHash
            self.activityId = activityId
            self.activityVersion = activityVersion
            self.activityRunId = activityRunId
            self.metadata = metadata
            self.data = data
            self.replayKey = replayKey
            self.receivedAt = receivedAt
        }
    }

    package enum Outcome: Sendable, Equatable {
        case stored(new: Bool)
        /// No participant of the study has that participant id: the participants move in first.
        case unknownParticipant
    }

    package let client: PostgresClient
    package let audit: AuditLog
    /// Wakes this process's processing worker.
    package let stored: WakeSignal
    package let logger: Logger

    package init(client: PostgresClient, audit: AuditLog, stored: WakeSignal, logger: Logger) {
        self.client = client
        self.audit = audit
        self.stored = stored
        self.logger = logger
    }

    /// Stores the rows in one transaction, with one audit event; each row's outcome in order.
    package func insert(_ rows: [Row], studyKey: String, actor: String, source: String) async throws -> [Outcome] {
        guard !rows.isEmpty else { return [] }
        let outcomes = try await client.withTransaction(logger: logger) { connection -> [Outcome] in
            let result = try await connection.query(
                """
                WITH input AS MATERIALIZED (
                    SELECT * FROM unnest(\(rows.map(\.participantTokenHash))::text[], \(rows.map(\.activityId))::text[],
                                         \(rows.map(\.activityVersion))::text[], \(rows.map { $0.activityRunId ?? "" })::text[],
                                         \(rows.map(\.metadata))::text[], \(rows.map(\.data))::text[], \(rows.map(\.replayKey))::text[],
                                         \(rows.map(\.receivedAt))::timestamptz[])
                         WITH ORDINALITY AS t(h, a, v, r, m, d, f, at, n)
                ), resolved AS (
                    SELECT i.*, p.id AS pid FROM input i
                    LEFT JOIN LATERAL (
                        SELECT q.id FROM participants q WHERE q.study_key = \(studyKey) AND q.enrolled_token_sha256 = i.h
                        ORDER BY q.id LIMIT 1
                    ) p ON true
                ), stored AS (
                    INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data,
                                           fingerprint, received_at)
                    SELECT pid, \(studyKey), a, v, NULLIF(r, ''), m::jsonb, d::jsonb, f, at FROM resolved WHERE pid IS NOT NULL
                    ON CONFLICT (participant_id, fingerprint) DO NOTHING
                    RETURNING participant_id, fingerprint
                )
                SELECT r.n::int8, r.pid IS NOT NULL, s.participant_id IS NOT NULL
                FROM resolved r LEFT JOIN stored s ON s.participant_id = r.pid AND s.fingerprint = r.f
                ORDER BY r.n
                """, logger: logger)
            var outcomes: [Outcome] = []
            for try await (_, known, new) in result.decode((Int64, Bool, Bool).self) {
                outcomes.append(known ? .stored(new: new) : .unknownParticipant)
            }
            let created = outcomes.filter { $0 == .stored(new: true) }.count
            if created > 0 {
                try await audit.record(
                    actor: actor, action: "responses.moved_in", studyId: studyKey, details: ["count": String(created), "source": source],
                    on: connection)
            }
            return outcomes
        }
        if outcomes.contains(.stored(new: true)) { stored.signal() }
        return outcomes
    }

    /// What `insert` would make of the rows, writing nothing.
    package func preview(_ rows: [Row], studyKey: String) async throws -> [Outcome] {
        guard !rows.isEmpty else { return [] }
        let result = try await client.query(
            """
            SELECT t.n::int8, p.id IS NOT NULL, p.id IS NOT NULL AND NOT EXISTS (
                       SELECT 1 FROM responses r WHERE r.participant_id = p.id AND r.fingerprint = t.f)
            FROM unnest(\(rows.map(\.participantTokenHash))::text[], \(rows.map(\.replayKey))::text[]) WITH ORDINALITY AS t(h, f, n)
            LEFT JOIN LATERAL (
                SELECT q.id FROM participants q WHERE q.study_key = \(studyKey) AND q.enrolled_token_sha256 = t.h ORDER BY q.id LIMIT 1
            ) p ON true
            ORDER BY t.n
            """, logger: logger)
        var outcomes: [Outcome] = []
        for try await (_, known, new) in result.decode((Int64, Bool, Bool).self) {
            outcomes.append(known ? .stored(new: new) : .unknownParticipant)
        }
        return outcomes
    }
}
