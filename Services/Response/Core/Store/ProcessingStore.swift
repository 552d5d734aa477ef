import Logging
import PostgresNIO
import ServiceKit

/// The response queue's SQL for the processor (`ResponseProcessor`): claiming due responses with
/// a lease, reading their answers, locking them in the transaction that stores them, and settling
/// each response.
package struct ProcessingStore: Sendable {
    /// Responses waiting to be processed, and the age of the oldest, for `/metrics`
    /// (`ServiceMetrics.watchQueue`).
    package static let depthQuery: PostgresQuery = """
        SELECT count(*)::int, extract(epoch FROM now() - min(received_at))::float8
        FROM responses WHERE status = 'pending'
        """

    /// A claimed response, before its design is made ready.
    package struct Claimed: Sendable, Equatable {
        package var id: Int64
        package var studyKey: String
        package var studyId: String
        package var activityId: String
        /// The activity version whose design it is processed against: the one it was sent for,
        /// or a later one a team chose when reprocessing it.
        package var version: String
        package var attempts: Int
        /// The answers' stored size (`pg_column_size`, compressed as stored): how a batch is cut
        /// into transactions that each hold a bounded amount in memory.
        package var storedBytes: Int

        package init(
            id: Int64, studyKey: String, studyId: String, activityId: String, version: String, attempts: Int, storedBytes: Int
        ) {
            self.id = id
            self.studyKey = studyKey
            self.studyId = studyId
            self.activityId = activityId
            self.version = version
            self.attempts = attempts
            self.storedBytes = storedBytes
        }
    }

    /// A claimed response's answers, read to be planned.
    package struct Loaded: Sendable {
        package var id: Int64
        package var participantId: Int64
        /// The participant's number in the study: the `ParticipantId` of its tables.
        package var participantNumber: Int64
        package var studyKey: String
        package var studyId: String
        package var activityId: String
        package var data: String
    }

    /// What a stored batch makes of each response: `processed`, or `error` with its message.
    package struct Settlement: Sendable, Equatable {
        package var id: Int64
        package var status: String
        package var error: String?

        package static func processed(_ id: Int64) -> Self { Self(id: id, status: "processed", error: nil) }
        package static func error(_ id: Int64, _ message: String) -> Self { Self(id: id, status: "error", error: message) }
    }

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Leases up to `limit` due responses, studies taking turns: each study's due responses are
    /// ranked oldest first (by when they fell due), and the batch takes every study's first, then
    /// every study's second, and so on, starting with the study after `afterStudy` (by key,
    /// wrapping round). A study with a large backlog thus gets one place in turn with every other
    /// study that has any. Rows another worker holds are skipped; rows looked at but not taken are
    /// unlocked when the statement ends.
    package func claim(limit: Int, lease: Duration, afterStudy last: String?) async throws -> [Claimed] {
        let rows = try await client.query(
            """
            UPDATE responses SET attempts = responses.attempts + 1,
                next_attempt_at = now() + make_interval(secs => \(lease.inSeconds))
            FROM (
                SELECT turns.id,
                       row_number() OVER (ORDER BY turns.turn, turns.study_key <= \(last ?? ""), turns.study_key) AS place
                FROM (
                    SELECT due.id, due.study_key,
                           row_number() OVER (PARTITION BY due.study_key ORDER BY due.next_attempt_at, due.id) AS turn
                    FROM studies s CROSS JOIN LATERAL (
                        SELECT r.id, r.study_key, r.next_attempt_at FROM responses r
                        WHERE r.study_key = s.study_key AND r.status = 'pending' AND r.next_attempt_at <= now()
                        ORDER BY r.next_attempt_at, r.id LIMIT \(limit)
                        FOR UPDATE SKIP LOCKED
                    ) due
                ) turns
                ORDER BY place
                LIMIT \(limit)
            ) picked, studies s
            WHERE responses.id = picked.id AND s.study_key = responses.study_key
            RETURNING responses.id, responses.study_key, s.study_id, responses.activity_id,
                coalesce(responses.design_version, responses.activity_version),
                responses.attempts, pg_column_size(responses.data), picked.place
            """, logger: logger)
        var claimed: [(place: Int64, response: Claimed)] = []
        for try await (id, studyKey, studyId, activityId, version, attempts, bytes, place) in rows.decode(
            (Int64, String, String, String, String, Int, Int32, Int64).self)
        {
            let response = Claimed(
                id: id, studyKey: studyKey, studyId: studyId, activityId: activityId, version: version, attempts: attempts,
                storedBytes: Int(bytes))
            claimed.append((place, response))
        }
        // RETURNING has no order of its own: the batch is given in the order it was picked in.
        return claimed.sorted { $0.place < $1.place }.map(\.response)
    }

    /// Reads the answers of those of `ids` still pending, without locking them: the claim's lease
    /// keeps other workers off while the slice is planned, and `lock` checks again before it is
    /// stored.
    package func load(_ ids: [Int64]) async throws -> [Loaded] {
        let rows = try await client.query(
            """
            SELECT r.id, r.participant_id, p.number, r.study_key, s.study_id, r.activity_id, r.data::text
            FROM responses r JOIN studies s ON s.study_key = r.study_key JOIN participants p ON p.id = r.participant_id
            WHERE r.id = ANY(\(ids)) AND r.status = 'pending'
            ORDER BY r.id
            """, logger: logger)
        var loaded: [Loaded] = []
        for try await (id, participantId, number, studyKey, studyId, activityId, data) in rows.decode(
            (Int64, Int64, Int64, String, String, String, String).self)
        {
            loaded.append(
                Loaded(
                    id: id, participantId: participantId, participantNumber: number, studyKey: studyKey, studyId: studyId,
                    activityId: activityId, data: data))
        }
        return loaded
    }

    /// Locks those of `ids` still pending and not held by another worker (one that claimed them
    /// again after this claim's lease ended); returns the ids locked.
    package func lock(_ ids: [Int64], on connection: PostgresConnection) async throws -> Set<Int64> {
        let rows = try await connection.query(
            """
            SELECT id FROM responses WHERE id = ANY(\(ids)) AND status = 'pending' ORDER BY id FOR UPDATE SKIP LOCKED
            """, logger: logger)
        var locked: Set<Int64> = []
        for try await id in rows.decode(Int64.self) { locked.insert(id) }
        return locked
    }

    /// Records each response's status, in the transaction that stored its rows. A failure takes
    /// the settlement feed's next number, and so does any later settling of a response that
    /// failed before; a response that never failed takes none (docs/response-api.md, Settlements).
    package func settle(_ settlements: [Settlement], on connection: PostgresConnection) async throws {
        guard !settlements.isEmpty else { return }
        // Arrays of optionals cannot be bound: empty stands for no error (a message never is).
        try await connection.query(
            """
            UPDATE responses r SET status = m.status, error_message = NULLIF(m.error, ''), processed_at = now(),
                settled_seq = CASE WHEN m.status = 'error' OR r.settled_seq IS NOT NULL THEN nextval('response_settlement_seq') END,
                settled_at = CASE WHEN m.status = 'error' OR r.settled_seq IS NOT NULL THEN now() END
            FROM unnest(\(settlements.map(\.id)), \(settlements.map(\.status)), \(settlements.map { $0.error ?? "" }))
                AS m(id, status, error)
            WHERE r.id = m.id
            """, logger: logger)
    }

    /// A response whose design cannot be had now: tried again after `retryAfter`.
    package func postpone(_ id: Int64, reason: String, retryAfter: Duration) async throws {
        try await client.query(
            """
            UPDATE responses SET error_message = \(reason),
                next_attempt_at = now() + make_interval(secs => \(retryAfter.inSeconds))
            WHERE id = \(id) AND status = 'pending'
            """, logger: logger)
    }

    /// A response whose design the rules refuse: an `error`, with the original's message.
    package func reject(_ id: Int64, reason: String) async throws {
        try await client.query(
            """
            UPDATE responses SET status = 'error', error_message = \(reason), processed_at = now(),
                settled_seq = nextval('response_settlement_seq'), settled_at = now()
            WHERE id = \(id) AND status = 'pending'
            """, logger: logger)
    }
}
