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

        package var archiveId: UUID? {
            switch self {
            case .new(let id), .replay(let id): id
            case .noActivity: nil
            }
        }
    }

    package let client: PostgresClient
    /// Whether a pooler in transaction mode stands between: no named prepared statements then.
    package let pooling: DatabaseSettings.Pooling
    package let seal: RowSeal
    package let audit: AuditLog
    /// Signalled when a response is stored: the processing worker wakes.
    package let stored: WakeSignal
    package let logger: Logger

    package init(
        client: PostgresClient, encryptionKey: Data, audit: AuditLog, stored: WakeSignal, pooling: DatabaseSettings.Pooling = .session,
        logger: Logger
    ) {
        self.client = client
        self.pooling = pooling
        seal = RowSeal.studyKeys(encryptionKey: encryptionKey)
        self.audit = audit
        self.stored = stored
        self.logger = logger
    }

    // MARK: The study's key pair

    /// The study's key pair, or nil when its certificate was never asked for.
    package func keyPair(studyKey: String) async throws -> StudyKeyPair? {
        let rows = try await client.query(
            "SELECT certificate, sealed_private_key FROM sage_study_keys WHERE study_key = \(studyKey)", logger: logger)
        for try await (certificate, sealed) in rows.decode((ByteBuffer, ByteBuffer).self) {
            guard let key = seal.open(Array(buffer: sealed), context: studyKey) else {
                // Another encryption key than the one that sealed it: nothing sealed opens.
                throw SealedKeyUnreadable(studyKey: studyKey)
            }
            return StudyKeyPair(privateKeyDER: key, certificateDER: Array(buffer: certificate))
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

    /// Stores the archive and the response it becomes, filed under the study's published version
    /// of its assessment's activity, with its audit event: one statement, committed before this
    /// returns. A run stored before is a replay and stores nothing.
    package func store(_ reception: SageArchiveReception, participantId: Int64, studyKey: String) async throws -> Stored {
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
        let statement = SageArchiveStatement(
            archiveId: archiveId, studyKey: studyKey, participantId: participantId, idempotencyKey: reception.idempotencyKey,
            assessmentId: reception.assessmentIdentifier, taskRunUUID: reception.taskRunUUID, sha256: reception.sha256,
            byteCount: reception.zip.count, sealed: reception.sealed,
            files: JSONValue.array(reception.files.map {
                .object([
                    "name": .string($0.name), "bytes": .number(Double($0.bytes)), "listed": .bool($0.listed),
                    "unexpected": .bool($0.unexpected),
                ])
            }).serialized(sortedKeys: true),
            content: ByteBuffer(bytes: reception.zip), metadata: metadata.serialized(sortedKeys: false),
            data: reception.data.serialized(sortedKeys: false), actor: "participant:\(participantId)",
            details: details.serialized(sortedKeys: true))
        var outcome: Stored?
        for try await (activities, inserted, existing) in try await client.run(statement, pooling: pooling, logger: logger) {
            if activities == 0 {
                outcome = .noActivity
            } else if let inserted {
                outcome = .new(inserted)
            } else if let existing {
                outcome = .replay(existing)
            }
        }
        if case .new = outcome { stored.signal() }
        if let outcome { return outcome }
        // The same run stored at this moment by another request: committed now, so it is seen.
        let rows = try await client.query(
            """
            SELECT archive_id FROM sage_archives
            WHERE participant_id = \(participantId) AND idempotency_key = \(reception.idempotencyKey)
            """, logger: logger)
        for try await id in rows.decode(UUID.self) { return .replay(id) }
        throw StoreRace(description: "an archive conflicted and then could not be found")
    }

    package struct StoreRace: Error, CustomStringConvertible {
        package var description: String
    }

    /// The study's archives, newest first: all, or one participant's; `before` (an archive's row
    /// number, `nextBefore`) pages on.
    package func list(studyKey: String, participantId: Int64?, before: Int64?, limit: Int) async throws -> SageArchiveList {
        let rows = try await client.query(
            """
            SELECT a.id, a.archive_id, a.participant_id, a.assessment_id, a.activity_version, a.task_run_uuid, a.byte_count,
                   a.sealed, a.sha256, a.files::text, a.received_at, r.status, r.error_message
            FROM sage_archives a LEFT JOIN responses r ON r.id = a.response_id
            WHERE a.study_key = \(studyKey) AND (\(participantId)::int8 IS NULL OR a.participant_id = \(participantId))
              AND (\(before)::int8 IS NULL OR a.id < \(before))
            ORDER BY a.id DESC LIMIT \(limit + 1)
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
        let page = Array(found.prefix(limit))
        return SageArchiveList(
            archives: page.map(\.1), nextBefore: found.count > limit ? page.last.map { String($0.0) } : nil)
    }

    /// The archive's ZIP as stored, or nil when the study has no such archive.
    package func content(studyKey: String, archiveId: UUID) async throws -> [UInt8]? {
        let rows = try await client.query(
            "SELECT content FROM sage_archives WHERE study_key = \(studyKey) AND archive_id = \(archiveId)", logger: logger)
        for try await content in rows.decode(ByteBuffer.self) { return Array(buffer: content) }
        return nil
    }

    /// Forgets a withdrawing participant's archives and uploads (with their other data).
    package static func delete(participantId: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("DELETE FROM sage_archives WHERE participant_id = \(participantId)", logger: logger)
        try await connection.query("DELETE FROM sage_uploads WHERE participant_id = \(participantId)", logger: logger)
    }
}

/// `SageArchiveStore.store` as one statement, prepared once per connection: the activity looked up
/// in the study's newest event (as written, else in any case), the response and the archive
/// inserted when the run is new, the audit event with them; then the activity count, the new
/// archive's id, and the id of the archive stored before for the same run.
package struct SageArchiveStatement: PostgresPreparedStatement {
    package static let sql = """
        WITH activity AS (
            SELECT a->>'activityId' AS id, a->>'label' AS label
            FROM studies s, jsonb_array_elements(s.event->'activities') a
            WHERE s.study_key = $2 AND lower(a->>'activityId') = lower($5)
            ORDER BY a->>'activityId' = $5 DESC LIMIT 1
        ), response AS (
            INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data, fingerprint)
            SELECT $3, $2, activity.id, activity.label, $6, $12::jsonb, $13::jsonb, 'sage:' || $4 FROM activity
            ON CONFLICT (participant_id, fingerprint) DO NOTHING
            RETURNING id, activity_id, activity_version
        ), archive AS (
            INSERT INTO sage_archives (
                archive_id, study_key, participant_id, idempotency_key, response_id, assessment_id, activity_version, task_run_uuid,
                sha256, byte_count, sealed, files, content)
            SELECT $1, $2, $3, $4, response.id, response.activity_id, response.activity_version, $6, $7, $8, $9, $10::jsonb, $11
            FROM response
            ON CONFLICT (participant_id, idempotency_key) DO NOTHING
            RETURNING archive_id
        ), audit AS (
            INSERT INTO audit_events (actor, action, study_id, details)
            SELECT $14, 'sage.archive_received', $2, $15::jsonb FROM archive
        )
        SELECT (SELECT count(*) FROM activity)::int8, (SELECT archive_id FROM archive),
               (SELECT archive_id FROM sage_archives WHERE participant_id = $3 AND idempotency_key = $4)
        """
    package static let bindingDataTypes: [PostgresDataType] = [
        .uuid, .text, .int8, .text, .text, .text, .text, .int4, .bool, .text, .bytea, .text, .text, .text, .text,
    ]
    package typealias Row = (Int64, UUID?, UUID?)

    package var archiveId: UUID
    package var studyKey: String
    package var participantId: Int64
    package var idempotencyKey: String
    package var assessmentId: String
    package var taskRunUUID: String?
    package var sha256: String
    package var byteCount: Int
    package var sealed: Bool
    package var files: String
    package var content: ByteBuffer
    package var metadata: String
    package var data: String
    package var actor: String
    package var details: String

    package func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 15)
        bindings.append(archiveId)
        bindings.append(studyKey)
        bindings.append(participantId)
        bindings.append(idempotencyKey)
        bindings.append(assessmentId)
        bindings.append(taskRunUUID)
        bindings.append(sha256)
        bindings.append(Int32(clamping: byteCount))
        bindings.append(sealed)
        bindings.append(files)
        bindings.append(content)
        bindings.append(metadata)
        bindings.append(data)
        bindings.append(actor)
        bindings.append(details)
        return bindings
    }

    package func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
