import CMSEnvelope
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels

/// Sage result archives (docs/sage.md, Result archives): each study's key pair, the archives
/// received, and the response each became.
package struct SageArchiveStore: Sendable {
    package enum Stored: Sendable, Equatable {
        case new(UUID)
        /// The same run was stored before: its archive.
        case replay(UUID)
        /// The study's published version has no activity by the archive's assessment.
        case noActivity
        /// The app token no longer admits the participant (withdrawn, or another token), or
        /// their study stopped collecting: nothing was stored.
        case notAdmitted
    }

    package let client: PostgresClient
    /// Whether a pooler in transaction mode stands between: no named prepared statements then.
    package let pooling: DatabaseSettings.Pooling
    package let seal: RowSeal
    package let audit: AuditLog
    /// Signalled when a response is stored: the processing worker wakes.
    package let stored: WakeSignal
    package let logger: Logger
    private let commits: GroupCommit<Row, Stored?>
    /// Key pairs read before: a study's key pair never changes once made.
    private let keyPairs = ExpiringCache<String, StudyKeyPair>(timeToLive: .seconds(600), capacity: 1_000)

    package init(
        client: PostgresClient, encryptionKey: Data, audit: AuditLog, stored: WakeSignal, pooling: DatabaseSettings.Pooling = .session,
        logger: Logger
    ) {
        commits = GroupCommit(
            maxBatch: Self.maxBatch, maxInFlight: ResponseIngest.maxInFlight, splitsOn: ResponseIngest.isOneRowsFault, logger: logger
        ) { rows in
            try await Self.write(rows, client: client, stored: stored, pooling: pooling, logger: logger)
        }
        self.client = client
        self.pooling = pooling
        seal = RowSeal.studyKeys(encryptionKey: encryptionKey)
        self.audit = audit
        self.stored = stored
        self.logger = logger
    }

    /// Most archives one statement writes: each carries its ZIP (up to `SAGE_MAX_ARCHIVE_BYTES`),
    /// so a batch is kept to what one statement should hold in memory.
    package static let maxBatch = 32

    // MARK: The study's key pair

    /// The study's key pair, or nil when its certificate was never asked for.
    package func keyPair(studyKey: String) async throws -> StudyKeyPair? {
        if let known = keyPairs.value(studyKey) { return known }
        let rows = try await client.query(
            "SELECT certificate, sealed_private_key FROM sage_study_keys WHERE study_key = \(studyKey)", logger: logger)
        for try await (certificate, sealed) in rows.decode((ByteBuffer, ByteBuffer).self) {
            guard let key = seal.open(Array(buffer: sealed), context: studyKey) else {
                // Another encryption key than the one that sealed it: nothing sealed opens.
                throw SealedKeyUnreadable(studyKey: studyKey)
            }
            let pair = StudyKeyPair(privateKeyDER: key, certificateDER: Array(buffer: certificate))
            keyPairs.keep(pair, for: studyKey)
            return pair
        }
        return nil
    }

    package struct SealedKeyUnreadable: Error, CustomStringConvertible {
        package var studyKey: String
        package var description: String {
            "the private key of study \(studyKey) does not open with this STUDYSTACK_ENCRYPTION_KEY"
        }
    }

    /// The study's key pair, made the first time it is asked for (audited). Two replicas asked at
    /// once both make one; the first stored is kept, and both answer with it.
    package func ensureKeyPair(studyKey: String, studyId: String, actor: String) async throws -> StudyKeyPair {
        if let existing = try await keyPair(studyKey: studyKey) { return existing }
        let made = try StudyKeyPair.generate(studyId: studyId)
        let sealed = try seal.seal(made.privateKeyDER, context: studyKey)
        try await client.withTransaction(logger: logger) { connection in
            let inserted = try await connection.query(
                """
                INSERT INTO sage_study_keys (study_key, certificate, sealed_private_key)
                VALUES (\(studyKey), \(ByteBuffer(bytes: made.certificateDER)), \(ByteBuffer(bytes: sealed)))
                ON CONFLICT (study_key) DO NOTHING RETURNING study_key
                """, logger: logger)
            for try await _ in inserted {
                try await audit.record(actor: actor, action: "sage.key_pair_created", studyId: studyKey, on: connection)
            }
        }
        guard let kept = try await keyPair(studyKey: studyKey) else { throw SealedKeyUnreadable(studyKey: studyKey) }
        return kept
    }

    // MARK: Archives

    /// One archive ready to store.
    package struct Row: Sendable {
        var archiveId: UUID
        var studyKey: String
        var participantId: Int64
        var appTokenHash: String
        var reception: SageArchiveReception
        var metadata: String
        var data: String
        var files: String
        var details: String
    }

    /// Stores the archive and the response it becomes, filed under the study's published version
    /// of its assessment's activity, with its audit event, and committed before this returns. Archives
    /// that arrive together are written by one statement (group commit, as responses are). A run
    /// stored before is a replay and stores nothing. The statement stores only while the app token
    /// hashing to `appTokenHash` is still the participant's and their study collects.
    package func store(_ reception: SageArchiveReception, participantId: Int64, studyKey: String, appTokenHash: String) async throws
        -> Stored
    {
        let archiveId = UUID()
        var metadata = reception.metadata
        if case .object(var members) = metadata {
            members["archiveId"] = .string(archiveId.uuidString.lowercased())
            metadata = .object(members)
        }
        let details: JSONValue = .object([
            "archiveId": .string(archiveId.uuidString.lowercased()), "assessmentId": .string(reception.assessmentIdentifier),
            "bytes": .string(String(reception.zip.count)), "sealed": .string(String(reception.sealed)),
        ])
        let files = JSONValue.array(reception.files.map {
            .object([
                "name": .string($0.name), "bytes": .number(Double($0.bytes)), "listed": .bool($0.listed), "unexpected": .bool($0.unexpected),
            ])
        })
        let row = Row(
            archiveId: archiveId, studyKey: studyKey, participantId: participantId, appTokenHash: appTokenHash, reception: reception,
            metadata: metadata.serialized(sortedKeys: false), data: reception.data.serialized(sortedKeys: false),
            files: files.serialized(sortedKeys: true), details: details.serialized(sortedKeys: true))
        if let outcome = try await commits.submit(row) { return outcome }
        // The same run stored by another request at the same moment (in this batch or another
        // replica's): committed now, so it is seen.
        let rows = try await client.query(
            """
            SELECT archive_id FROM sage_archives
            WHERE participant_id = \(participantId) AND idempotency_key = \(reception.idempotencyKey)
            """, logger: logger)
        for try await id in rows.decode(UUID.self) { return .replay(id) }
        throw StoreRace(description: "an archive conflicted and then could not be found")
    }

    /// One statement for a batch: each row's outcome by its position, nil when it met a row stored
    /// at the same moment.
    private static func write(
        _ rows: [Row], client: PostgresClient, stored: WakeSignal, pooling: DatabaseSettings.Pooling, logger: Logger
    ) async throws -> [Result<Stored?, any Error>] {
        let statement = SageArchiveStatement(rows: rows)
        var found: [Int: Stored?] = [:]
        for try await (position, admitted, hasActivity, inserted, existing) in try await client.run(
            statement, pooling: pooling, logger: logger)
        {
            let index = Int(position) - 1
            guard rows.indices.contains(index) else { continue }
            if !admitted {
                found[index] = .some(.notAdmitted)
            } else if !hasActivity {
                found[index] = .some(.noActivity)
            } else if inserted {
                found[index] = .some(.new(rows[index].archiveId))
            } else if let existing {
                found[index] = .some(.replay(existing))
            } else {
                found[index] = .some(nil)
            }
        }
        if found.values.contains(where: { if case .new? = $0 { true } else { false } }) { stored.signal() }
        return rows.indices.map { index in
            guard let outcome = found[index] else { return .failure(GroupCommitError.noResult) }
            return .success(outcome)
        }
    }

    package struct StoreRace: Error, CustomStringConvertible {
        package var description: String
    }

    /// The study's archives, newest first: all, or those of the participant numbered
    /// `participantNumber` in the study; `before` (an archive's row number, `nextBefore`) pages on.
    package func list(studyKey: String, participantNumber: Int64?, before: Int64?, limit: Int) async throws -> SageArchiveList {
        let rows = try await client.query(
            """
            SELECT a.id, a.archive_id, p.number, a.assessment_id, a.activity_version, a.task_run_uuid, a.byte_count,
                   a.sealed, a.sha256, a.files::text, a.received_at, r.status, r.error_message
            FROM sage_archives a JOIN participants p ON p.id = a.participant_id LEFT JOIN responses r ON r.id = a.response_id
            WHERE a.study_key = \(studyKey) AND (\(participantNumber)::int8 IS NULL OR p.number = \(participantNumber))
              AND (\(before)::int8 IS NULL OR a.id < \(before))
            ORDER BY a.id DESC LIMIT \(KeysetPage<(Int64, SageArchiveSummary), String>.fetchLimit(limit))
            """, logger: logger)
        var found: [(Int64, SageArchiveSummary)] = []
        for try await (id, archiveId, participant, assessment, version, run, bytes, sealed, sha, files, at, status, error) in rows.decode(
            (Int64, UUID, Int64, String, String, String?, Int, Bool, String, String, Date, String?, String?).self)
        {
            let entries = (try? JSONDecoder().decode([SageArchiveFile].self, from: Data(files.utf8))) ?? []
            found.append((id, SageArchiveSummary(
                archiveId: archiveId.uuidString.lowercased(), participantId: participant, assessmentId: assessment,
                activityVersion: version, taskRunUUID: run, bytes: bytes, sealed: sealed, sha256: sha, files: entries,
                receivedAt: at, status: status, error: error)))
        }
        let page = KeysetPage(found, limit: limit) { String($0.0) }
        return SageArchiveList(archives: page.items.map(\.1), nextBefore: page.next)
    }

    /// The archive's ZIP as stored, or nil when the study has no such archive.
    package func content(studyKey: String, archiveId: UUID) async throws -> [UInt8]? {
        let rows = try await client.query(
            "SELECT content FROM sage_archives WHERE study_key = \(studyKey) AND archive_id = \(archiveId)", logger: logger)
        for try await content in rows.decode(ByteBuffer.self) { return Array(buffer: content) }
        return nil
    }

}

/// A batch of `SageArchiveStore.store` as one statement, prepared once per connection: for each
/// archive, its sender admitted again (the app token still theirs, not withdrawn, the study
/// collecting), its activity looked up in the study's newest event (as written, else in any case),
/// the response and the archive inserted when the run is new, and the audit event with them; then
/// by position, whether the sender was admitted, whether the activity was found, whether the
/// archive was inserted, and the archive stored before for the same run.
package struct SageArchiveStatement: PostgresPreparedStatement {
    package static let sql = """
        WITH input AS (
            SELECT * FROM unnest(
                $1::uuid[], $2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int4[], $9::bool[],
                $10::text[], $11::bytea[], $12::text[], $13::text[], $14::text[], $15::text[]
            ) WITH ORDINALITY AS t(archive_id, study_key, participant_id, idem, assessment, run, sha, bytes, sealed, files, content,
                                   metadata, data, details, token_hash, n)
        ), admitted AS (
            SELECT i.n FROM input i
            JOIN participants p ON p.id = i.participant_id AND p.app_token_hash = i.token_hash AND p.status <> 'withdrawn'
            JOIN studies s ON s.study_key = p.study_key AND s.study_key = i.study_key AND s.collection_enabled
        ), activity AS (
            SELECT DISTINCT ON (i.n) i.n, a->>'activityId' AS id, a->>'label' AS label
            FROM input i JOIN admitted ad ON ad.n = i.n JOIN studies s ON s.study_key = i.study_key,
                 jsonb_array_elements(s.event->'activities') a
            WHERE lower(a->>'activityId') = lower(i.assessment)
            ORDER BY i.n, a->>'activityId' = i.assessment DESC
        ), response AS (
            INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data, fingerprint)
            SELECT i.participant_id, i.study_key, a.id, a.label, NULLIF(i.run, ''), i.metadata::jsonb, i.data::jsonb, 'sage:' || i.idem
            FROM input i JOIN activity a ON a.n = i.n
            ON CONFLICT (participant_id, fingerprint) DO NOTHING
            RETURNING id, participant_id, fingerprint, activity_id, activity_version
        ), archive AS (
            INSERT INTO sage_archives (
                archive_id, study_key, participant_id, idempotency_key, response_id, assessment_id, activity_version, task_run_uuid,
                sha256, byte_count, sealed, files, content)
            SELECT i.archive_id, i.study_key, i.participant_id, i.idem, r.id, r.activity_id, r.activity_version, NULLIF(i.run, ''),
                   i.sha, i.bytes, i.sealed, i.files::jsonb, i.content
            FROM input i JOIN response r ON r.participant_id = i.participant_id AND r.fingerprint = 'sage:' || i.idem
            ON CONFLICT (participant_id, idempotency_key) DO NOTHING
            RETURNING archive_id
        ), audit AS (
            INSERT INTO audit_events (actor, action, study_id, details)
            SELECT 'participant:' || i.participant_id, 'sage.archive_received', i.study_key, i.details::jsonb
            FROM input i JOIN archive a ON a.archive_id = i.archive_id
        )
        SELECT i.n, ad.n IS NOT NULL, a.n IS NOT NULL, ar.archive_id IS NOT NULL, old.archive_id
        FROM input i LEFT JOIN admitted ad ON ad.n = i.n LEFT JOIN activity a ON a.n = i.n
        LEFT JOIN archive ar ON ar.archive_id = i.archive_id
        LEFT JOIN sage_archives old ON old.participant_id = i.participant_id AND old.idempotency_key = i.idem
        """
    package static let bindingDataTypes: [PostgresDataType] = [
        .uuidArray, .textArray, .int8Array, .textArray, .textArray, .textArray, .textArray, .int4Array, .boolArray, .textArray,
        .byteaArray, .textArray, .textArray, .textArray, .textArray,
    ]
    package typealias Row = (Int64, Bool, Bool, Bool, UUID?)

    package var rows: [SageArchiveStore.Row]

    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 15)
        bindings.append(rows.map(\.archiveId))
        bindings.append(rows.map(\.studyKey))
        bindings.append(rows.map(\.participantId))
        bindings.append(rows.map(\.reception.idempotencyKey))
        bindings.append(rows.map(\.reception.assessmentIdentifier))
        bindings.append(rows.map { $0.reception.taskRunUUID ?? "" })
        bindings.append(rows.map(\.reception.sha256))
        bindings.append(rows.map { Int32(clamping: $0.reception.zip.count) })
        bindings.append(rows.map(\.reception.sealed))
        bindings.append(rows.map(\.files))
        bindings.append(rows.map { ByteBuffer(bytes: $0.reception.zip) })
        bindings.append(rows.map(\.metadata))
        bindings.append(rows.map(\.data))
        bindings.append(rows.map(\.details))
        bindings.append(rows.map(\.appTokenHash))
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
