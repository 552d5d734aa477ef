import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Writes submitted responses with group commit (`GroupCommit`): submissions that arrive while a
/// write is in flight are resolved to their participants and stored together, in one statement.
/// It is the one way a submitted response reaches `responses`: the MyStudies apps'
/// `processResponse` and the schema app's POSTs alike, even in the same batch.
package final class ResponseIngest: Sendable {
    /// One response ready to store.
    package struct Row: Sendable {
        /// Who sent it: a participant known by their app token (the MyStudies apps, by the
        /// token's hash), or by the id their phone made in a study (the schema app).
        package enum Sender: Sendable, Hashable {
            case appToken(hash: String)
            case external(studyKey: String, id: String)
        }

        package var sender: Sender
        package var activityId: String
        package var activityVersion: String
        package var activityRunId: String?
        package var language: String?
        /// The metadata and answers as JSON text.
        package var metadata: String
        package var data: String
        /// The key that recognises a replay when the sender gives one (the schema app's
        /// deduplication key); otherwise the statement computes it from the activity, version,
        /// run and answers.
        package var replayKey: String?

        package init(
            sender: Sender, activityId: String, activityVersion: String, activityRunId: String? = nil, language: String? = nil,
            metadata: String, data: String, replayKey: String? = nil
        ) {
            self.sender = sender
            self.activityId = activityId
            self.activityVersion = activityVersion
            self.activityRunId = activityRunId
            self.language = language
            self.metadata = metadata
            self.data = data
            self.replayKey = replayKey
        }
    }

    /// What became of a row.
    package enum Outcome: Sendable, Equatable {
        /// Committed; `new` is false when the same response (participant and fingerprint) was
        /// already stored.
        case stored(new: Bool, participantId: Int64)
        /// No participant has that app token (it never existed, or they withdrew), or the study
        /// has no participant by that id yet.
        case unknownParticipant
        /// An app token's participant who withdrew. (The schema app's participants withdraw and
        /// rejoin by the logs they send, so their responses are kept either way.)
        case withdrawn
        /// The participant's study does not take responses now.
        case collectionDisabled(studyKey: String)
    }

    /// Most rows one statement writes, and most statements in flight (each takes a connection).
    /// Two in flight measured best on 2 cores (against one and four, make bench's
    /// processResponse line): one statement fills while the other commits, and batches stay large.
    package static let maxBatch = 256
    package static let maxInFlight = 2

    private let client: PostgresClient
    private let pooling: DatabaseSettings.Pooling
    private let logger: Logger
    private let commits: GroupCommit<Row, Outcome>

    /// Signalled when new responses are stored: this process's processing worker starts on them
    /// at once (another replica's polls; a `NOTIFY` per batch would cost a round trip each).
    package let stored: WakeSignal

    package init(client: PostgresClient, stored: WakeSignal, pooling: DatabaseSettings.Pooling = .session, logger: Logger) {
        self.client = client
        self.stored = stored
        self.pooling = pooling
        self.logger = logger
        commits = GroupCommit(
            maxBatch: Self.maxBatch, maxInFlight: Self.maxInFlight, splitsOn: Self.isOneRowsFault, logger: logger
        ) { rows in
            try await Self.answer(rows, client: client, stored: stored, pooling: pooling, logger: logger)
        }
    }

    /// Resolves the participant and stores `row` (committed when this returns `.stored`).
    package func store(_ row: Row) async throws -> Outcome {
        try await commits.submit(row)
    }

    /// A refusal by PostgreSQL (text jsonb cannot hold, say) may be one row's: the batch is then
    /// written row by row, so the others are stored.
    package static func isOneRowsFault(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] != nil
    }

    /// Writes the batch: each row's outcome by its position.
    private static func answer(
        _ rows: [Row], client: PostgresClient, stored: WakeSignal, pooling: DatabaseSettings.Pooling, logger: Logger
    ) async throws -> [Result<Outcome, any Error>] {
        let outcomes = try await insert(rows, client: client, pooling: pooling, logger: logger)
        if outcomes.values.contains(where: { if case .stored(true, _) = $0.0 { true } else { false } }) { stored.signal() }
        var answered: Set<String> = []
        return rows.enumerated().map { index, row in
            var (outcome, fingerprint) = outcomes[index] ?? (.unknownParticipant, "")
            if case .stored(true, let participant) = outcome, !answered.insert("\(participant):\(fingerprint)").inserted {
                // A repeat within the batch is as much a replay as one already stored.
                outcome = .stored(new: false, participantId: participant)
            }
            return .success(outcome)
        }
    }

    /// One statement for the batch: each row's participant looked up, the rows of participants
    /// who may send to collecting studies inserted; the outcome and fingerprint of each row by its
    /// position.
    ///
    /// The fingerprint that recognises a replay is the sender's key when it gives one, else it
    /// comes from the activity, version, run and the answers as a jsonb value (see
    /// `IngestStatement`), so the same answers re-serialised by a phone in another key order are
    /// still the same response.
    private static func insert(
        _ rows: [Row], client: PostgresClient, pooling: DatabaseSettings.Pooling, logger: Logger
    ) async throws -> [Int: (Outcome, String)] {
        try await outcomes(of: client.run(statement(for: rows), pooling: pooling, logger: logger))
    }

    /// The same statement for one row, inside a caller's transaction on `connection`: a schema
    /// app's first POST is stored with its sender's enrolment (`SchemaPostStore.storeEnrolling`),
    /// so it is admitted, fingerprinted and deduplicated as every other response is. The caller
    /// signals `stored` once its transaction commits.
    package func store(_ row: Row, on connection: PostgresConnection) async throws -> Outcome {
        let outcomes = try await Self.outcomes(of: connection.run(Self.statement(for: [row]), pooling: pooling, logger: logger))
        return outcomes[0]?.0 ?? .unknownParticipant
    }

    private static func statement(for rows: [Row]) -> IngestStatement {
        var statement = IngestStatement()
        statement.reserve(rows.count)
        for row in rows { statement.append(row) }
        return statement
    }

    /// Each row's outcome and fingerprint by its position (from 0).
    private static func outcomes<Rows: AsyncSequence>(of rows: Rows) async throws -> [Int: (Outcome, String)]
    where Rows.Element == IngestStatement.Row {
        var outcomes: [Int: (Outcome, String)] = [:]
        for try await (position, participant, studyKey, withdrawn, enabled, inserted, fingerprint) in rows {
            let outcome: Outcome =
                if let participant {
                    if withdrawn == true { .withdrawn } else if enabled != true {
                        .collectionDisabled(studyKey: studyKey ?? "")
                    } else { .stored(new: inserted, participantId: participant) }
                } else { .unknownParticipant }
            outcomes[position - 1] = (outcome, fingerprint)
        }
        return outcomes
    }
}

/// The batch statement, prepared once per connection (it is parsed and planned once, not per
/// batch). The fingerprint hashes the answers' canonical jsonb value with two seeds (128 bits)
/// rather than printing it as text and hashing that: the same answers in another key order give
/// the same jsonb, and so the same fingerprint. A sender's own replay key (`f`) takes its place.
///
/// Each row names its participant one of two ways: an app token's hash (`h`), or a study and the
/// id the participant's phone made (`k`, `e`); the lateral lookup takes the one index each way
/// needs. A withdrawn participant is barred only when known by their token (a withdrawn
/// participant's token is dead; the schema app's participants withdraw and rejoin by their logs).
///
/// `input` is `MATERIALIZED` so that each row's answers are read as jsonb once. Inlined, as
/// PostgreSQL inlines a CTE used once, its `d::jsonb` would be copied into each place `d` is used
/// and the answers read three times (the stored value and the two hashes): a third of the
/// statement's time.
package struct IngestStatement: PostgresPreparedStatement {
    package static let sql = """
        WITH input AS MATERIALIZED (
            SELECT t.h, t.k, t.e, t.a, t.v, t.r, t.l, t.m, t.d::jsonb AS d, t.f, t.n
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                        $9::text[], $10::text[])
                 WITH ORDINALITY AS t(h, k, e, a, v, r, l, m, d, f, n)
        ), resolved AS (
            SELECT i.*, p.id AS pid, p.study_key AS sk, p.status = 'withdrawn' AND i.h <> '' AS barred,
                   s.collection_enabled AS enabled,
                   CASE WHEN i.f <> '' THEN i.f ELSE
                       encode(sha256(convert_to(i.a || chr(31) || i.v || chr(31) || i.r || chr(31), 'UTF8')
                                     || int8send(jsonb_hash_extended(i.d, 0)) || int8send(jsonb_hash_extended(i.d, 1))),
                              'hex') END AS fp
            FROM input i
            LEFT JOIN LATERAL (
                SELECT q.id, q.study_key, q.status FROM participants q WHERE i.h <> '' AND q.app_token_hash = i.h
                UNION ALL
                SELECT q.id, q.study_key, q.status FROM participants q
                WHERE i.h = '' AND q.study_key = i.k AND q.external_id = i.e
            ) p ON true
            LEFT JOIN studies s ON s.study_key = p.study_key
        ), stored AS (
            INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, language,
                                   metadata, data, fingerprint)
            SELECT pid, sk, a, v, NULLIF(r, ''), NULLIF(l, ''), m::jsonb, d, fp FROM resolved
            WHERE pid IS NOT NULL AND NOT barred AND enabled
            ON CONFLICT (participant_id, fingerprint) DO NOTHING
            RETURNING participant_id, fingerprint
        )
        SELECT r.n::int8, r.pid, r.sk, r.barred, r.enabled, s.participant_id IS NOT NULL, r.fp
        FROM resolved r LEFT JOIN stored s ON s.participant_id = r.pid AND s.fingerprint = r.fp
        """
    package static let bindingDataTypes: [PostgresDataType] = Array(repeating: .textArray, count: 10)
    package typealias Row = (Int, Int64?, String?, Bool?, Bool?, Bool, String)

    // Arrays of optionals cannot be bound: empty stands for none (no present value is empty).
    package var appTokenHashes: [String] = []
    package var studyKeys: [String] = []
    package var externalIds: [String] = []
    package var activityIds: [String] = []
    package var versions: [String] = []
    package var runs: [String] = []
    package var languages: [String] = []
    package var metadata: [String] = []
    package var data: [String] = []
    package var replayKeys: [String] = []

    package init() {}

    mutating func reserve(_ count: Int) {
        for column in [\Self.appTokenHashes, \.studyKeys, \.externalIds, \.activityIds, \.versions, \.runs, \.languages,
                       \.metadata, \.data, \.replayKeys] as [WritableKeyPath<Self, [String]>] {
            self[keyPath: column].reserveCapacity(count)
        }
    }

    mutating func append(_ row: ResponseIngest.Row) {
        switch row.sender {
        case .appToken(let hash):
            appTokenHashes.append(hash)
            studyKeys.append("")
            externalIds.append("")
        case .external(let studyKey, let id):
            appTokenHashes.append("")
            studyKeys.append(studyKey)
            externalIds.append(id)
        }
        activityIds.append(row.activityId)
        versions.append(row.activityVersion)
        runs.append(row.activityRunId ?? "")
        languages.append(row.language ?? "")
        metadata.append(row.metadata)
        data.append(row.data)
        replayKeys.append(row.replayKey ?? "")
    }

    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        for column in [appTokenHashes, studyKeys, externalIds, activityIds, versions, runs, languages, metadata, data, replayKeys] {
            bindings.append(column)
        }
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
