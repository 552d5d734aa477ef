import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Writes submitted responses with group commit: submissions that arrive while a write is in
/// flight wait for the next one, which stores all of them in one statement (one commit, one WAL
/// flush). Each caller is answered only after the commit that holds its response, so nothing is
/// acknowledged before it is durable; under load hundreds of responses share a commit instead of
/// each paying for its own.
actor ResponseIngest {
    /// One response ready to store.
    struct Row: Sendable {
        var participantId: Int64
        var studyKey: String
        var activityId: String
        var activityVersion: String
        var activityRunId: String?
        var language: String?
        var metadata: String
        var data: String
        var fingerprint: String
    }

    private struct Waiting {
        var row: Row
        var continuation: CheckedContinuation<Bool, any Error>
    }

    /// Most rows one statement writes, and most statements in flight (each takes a connection).
    static let maxBatch = 256
    static let maxInFlight = 4

    private let client: PostgresClient
    private let logger: Logger
    private var waiting: [Waiting] = []
    private var inFlight = 0

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Stores `row` (committed when this returns); false when the same response (participant and
    /// fingerprint) was already stored.
    func store(_ row: Row) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            waiting.append(Waiting(row: row, continuation: continuation))
            startWritesIfIdle()
        }
    }

    private func startWritesIfIdle() {
        while inFlight < Self.maxInFlight && !waiting.isEmpty {
            let batch = Array(waiting.prefix(Self.maxBatch))
            waiting.removeFirst(batch.count)
            inFlight += 1
            Task { await self.write(batch) }
        }
    }

    private func write(_ batch: [Waiting]) async {
        do {
            let inserted = try await insert(batch.map(\.row))
            var answered: Set<String> = []
            for item in batch {
                let key = "\(item.row.participantId):\(item.row.fingerprint)"
                // A repeat within the batch is as much a replay as one already stored.
                item.continuation.resume(returning: inserted.contains(key) && answered.insert(key).inserted)
            }
        } catch {
            for item in batch { item.continuation.resume(throwing: error) }
        }
        inFlight -= 1
        startWritesIfIdle()
    }

    /// One statement for the batch; returns `participant:fingerprint` of the rows it inserted.
    private func insert(_ rows: [Row]) async throws -> Set<String> {
        var bindings = PostgresBindings(capacity: 9)
        bindings.append(rows.map(\.participantId))
        bindings.append(rows.map(\.studyKey))
        bindings.append(rows.map(\.activityId))
        bindings.append(rows.map(\.activityVersion))
        // Arrays of optionals cannot be bound; empty stands for none (neither is ever empty).
        bindings.append(rows.map { $0.activityRunId ?? "" })
        bindings.append(rows.map { $0.language ?? "" })
        bindings.append(rows.map(\.metadata))
        bindings.append(rows.map(\.data))
        bindings.append(rows.map(\.fingerprint))
        let query = PostgresQuery(
            unsafeSQL: """
                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, language,
                                       metadata, data, fingerprint)
                SELECT p, s, a, v, NULLIF(r, ''), NULLIF(l, ''), m::jsonb, d::jsonb, f
                FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                            $8::text[], $9::text[]) AS t(p, s, a, v, r, l, m, d, f)
                ON CONFLICT (participant_id, fingerprint) DO NOTHING
                RETURNING participant_id, fingerprint
                """, binds: bindings)
        var inserted: Set<String> = []
        for try await (participant, fingerprint) in try await client.query(query, logger: logger).decode((Int64, String).self) {
            inserted.insert("\(participant):\(fingerprint)")
        }
        return inserted
    }
}
