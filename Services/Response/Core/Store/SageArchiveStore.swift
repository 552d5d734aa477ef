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

        package var archiveId: UUID {
            switch self {
            case .new(let id), .replay(let id): id
            }
        }
    }

    package let client: PostgresClient
    package let seal: RowSeal
    package let audit: AuditLog
    /// Signalled when a response is stored: the processing worker wakes.
    package let stored: WakeSignal
    package let logger: Logger

    package init(client: PostgresClient, encryptionKey: Data, audit: AuditLog, stored: WakeSignal, logger: Logger) {
        self.client = client
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

    /// Stores the archive and the response it becomes, in one transaction, before the client
    /// is answered; a run stored before is a replay and stores nothing.
    package func store(
        _ reception: SageArchiveReception, participantId: Int64, studyKey: String, activityVersion: String
    ) async throws -> Stored {
        let archiveId = UUID()
        let files = JSONValue.array(reception.files.map {
            .object([
                "name": .string($0.name), "bytes": .number(Double($0.bytes)), "listed": .bool($0.listed), "unexpected": .bool($0.unexpected),
            ])
        }).serialized(sortedKeys: true)
        let outcome = try await client.withTransaction(logger: logger) { connection -> Stored in
            // The unique key holds a second upload of the same run until this one commits; it
            // then stores nothing and finds this one.
            let inserted = try await connection.query(
                """
                INSERT INTO sage_archives (
                    archive_id, study_key, participant_id, idempotency_key, assessment_id, activity_version, task_run_uuid,
                    sha256, byte_count, sealed, files, content)
                VALUES (
                    \(archiveId), \(studyKey), \(participantId), \(reception.idempotencyKey), \(reception.assessmentIdentifier),
                    \(activityVersion), \(reception.taskRunUUID), \(reception.sha256), \(reception.zip.count), \(reception.sealed),
                    \(files)::jsonb, \(ByteBuffer(bytes: reception.zip)))
                ON CONFLICT (participant_id, idempotency_key) DO NOTHING RETURNING id
                """, logger: logger)
            var rowId: Int64?
            for try await id in inserted.decode(Int64.self) { rowId = id }
            guard let rowId else {
                let existing = try await connection.query(
                    """
                    SELECT archive_id FROM sage_archives
                    WHERE participant_id = \(participantId) AND idempotency_key = \(reception.idempotencyKey)
                    """, logger: logger)
                for try await id in existing.decode(UUID.self) { return .replay(id) }
                throw PostgresIntegrityError(description: "an archive conflicted and then could not be found")
            }
            var metadata = reception.metadata
            if case .object(var members) = metadata {
                members["archiveId"] = .string(archiveId.uuidString.lowercased())
                metadata = .object(members)
            }
            let response = try await connection.query(
                """
                INSERT INTO responses (participant_id, study_key, activity_id, activity_version, activity_run_id, metadata, data, fingerprint)
                VALUES (\(participantId), \(studyKey), \(reception.assessmentIdentifier), \(activityVersion), \(reception.taskRunUUID),
                        \(metadata.serialized(sortedKeys: false))::jsonb, \(reception.data.serialized(sortedKeys: false))::jsonb,
                        \("sage:" + reception.idempotencyKey))
                ON CONFLICT (participant_id, fingerprint) DO NOTHING RETURNING id
                """, logger: logger)
            for try await responseId in response.decode(Int64.self) {
                try await connection.query(
                    "UPDATE sage_archives SET response_id = \(responseId) WHERE id = \(rowId)", logger: logger)
            }
            try await audit.record(
                actor: "participant:\(participantId)", action: "sage.archive_received", studyId: studyKey,
                details: [
                    "archiveId": archiveId.uuidString.lowercased(), "assessmentId": reception.assessmentIdentifier,
                    "bytes": String(reception.zip.count), "sealed": String(reception.sealed),
                ], on: connection)
            return .new(archiveId)
        }
        if case .new = outcome { stored.signal() }
        return outcome
    }

    package struct PostgresIntegrityError: Error, CustomStringConvertible {
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
