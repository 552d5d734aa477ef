import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels

/// Sage result archives refused for their content, kept as they arrived (docs/sage.md, Refused
/// archives): a participant's client deletes its copy once the upload succeeded, whatever the
/// server answered, so what the server refuses is kept here, with why, until the study's team
/// reprocesses it. The same bytes refused again are one item, counted.
package struct SageRefusalStore: Sendable {
    /// Which door the archive came through.
    package enum Door: String, Sendable {
        /// `POST /sage/v1/studies/{studyId}/archives`.
        case archives
        /// Bridge's upload handshake, on `complete`.
        case upload
    }

    /// A kept archive as reprocessing needs it: its bytes, and its participant as they are now.
    package struct Kept: Sendable {
        package var content: [UInt8]
        package var participant: ResponseStore.Participant
        /// The participant's app token's hash now; nil once they withdrew (the token stops then).
        package var appTokenHash: String?
        /// The archive a reprocessing stored it as, if one did.
        package var archiveId: UUID?

        package init(content: [UInt8], participant: ResponseStore.Participant, appTokenHash: String? = nil, archiveId: UUID? = nil) {
            self.content = content
            self.participant = participant
            self.appTokenHash = appTokenHash
            self.archiveId = archiveId
        }
    }

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Keeps `content` from `participantId` with why it was refused, and audits it; the same bytes
    /// from the same participant refused before are counted again and take the newer reason.
    /// Answers the kept item's id, or nil when the participant has withdrawn since a replica
    /// admitted them: what they send after leaving is not theirs to keep (a withdrawal with
    /// deletion has already removed the rest).
    @discardableResult
    package func keep(
        _ content: [UInt8], sha256: String, participantId: Int64, studyKey: String, door: Door, reason: String,
        problems: [ValidationProblem]
    ) async throws -> UUID? {
        let problemsJSON = String(decoding: try JSONEncoder().encode(problems), as: UTF8.self)
        let rows = try await client.query(
            """
            WITH kept AS (
                INSERT INTO sage_refused_archives (
                    refusal_id, study_key, participant_id, door, sha256, byte_count, content, reason, problems)
                SELECT \(UUID()), \(studyKey), p.id, \(door.rawValue), \(sha256), \(content.count),
                       \(ByteBuffer(bytes: content)), \(reason), \(problemsJSON)::jsonb
                FROM participants p WHERE p.id = \(participantId) AND p.status <> 'withdrawn'
                ON CONFLICT (participant_id, sha256) DO UPDATE
                SET times_refused = sage_refused_archives.times_refused + 1, last_refused_at = now(),
                    reason = EXCLUDED.reason, problems = EXCLUDED.problems
                RETURNING refusal_id
            ), audit AS (
                INSERT INTO audit_events (actor, action, study_id, details)
                SELECT 'participant:' || \(participantId), 'sage.archive_refused', \(studyKey),
                       jsonb_build_object('refusalId', refusal_id::text, 'door', \(door.rawValue)::text, 'reason', \(reason)::text)
                FROM kept
            )
            SELECT refusal_id FROM kept
            """, logger: logger)
        for try await id in rows.decode(UUID.self) { return id }
        return nil
    }

    /// The study's refused archives, newest first; `before` (a row number, `nextBefore`) pages on.
    package func list(studyKey: String, before: Int64?, limit: Int) async throws -> SageRefusedArchiveList {
        let rows = try await client.query(
            """
            SELECT r.id, r.refusal_id, p.number, r.door, r.byte_count, r.sha256, r.received_at, r.last_refused_at, r.times_refused,
                   r.reason, r.problems::text, r.archive_id, r.reprocessed_at
            FROM sage_refused_archives r JOIN participants p ON p.id = r.participant_id
            WHERE r.study_key = \(studyKey) AND (\(before)::int8 IS NULL OR r.id < \(before))
            ORDER BY r.id DESC LIMIT \(KeysetPage<(Int64, SageRefusedArchive), String>.fetchLimit(limit))
            """, logger: logger)
        var found: [(Int64, SageRefusedArchive)] = []
        for try await (id, refusalId, participant, door, bytes, sha, received, last, times, reason, problems, archive, reprocessed)
            in rows.decode((Int64, UUID, Int64, String, Int, String, Date, Date, Int, String, String, UUID?, Date?).self)
        {
            found.append((id, SageRefusedArchive(
                refusalId: refusalId.uuidString.lowercased(), participantId: participant, door: door, bytes: bytes, sha256: sha,
                receivedAt: received, lastRefusedAt: last, timesRefused: times, reason: reason,
                problems: (try? JSONDecoder().decode([ValidationProblem].self, from: Data(problems.utf8))) ?? [],
                archiveId: archive?.uuidString.lowercased(), reprocessedAt: reprocessed)))
        }
        let page = KeysetPage(found, limit: limit) { String($0.0) }
        return SageRefusedArchiveList(refused: page.items.map(\.1), nextBefore: page.next)
    }

    /// The kept archive `refusalId` of the study, with its participant as they are now; nil when
    /// the study has none by that id.
    package func kept(studyKey: String, refusalId: UUID) async throws -> Kept? {
        let rows = try await client.query(
            """
            SELECT r.content, p.id, p.study_key, s.study_id, p.status = 'withdrawn', s.collection_enabled, p.app_token_hash, r.archive_id
            FROM sage_refused_archives r JOIN participants p ON p.id = r.participant_id JOIN studies s ON s.study_key = p.study_key
            WHERE r.study_key = \(studyKey) AND r.refusal_id = \(refusalId)
            """, logger: logger)
        for try await (content, id, key, studyId, withdrawn, enabled, hash, archive) in rows.decode(
            (ByteBuffer, Int64, String, String, Bool, Bool, String?, UUID?).self)
        {
            return Kept(
                content: Array(buffer: content),
                participant: ResponseStore.Participant(id: id, studyKey: key, studyId: studyId, withdrawn: withdrawn, collectionEnabled: enabled),
                appTokenHash: hash, archiveId: archive)
        }
        return nil
    }

    /// A reprocessing stored the kept archive as `archiveId`.
    package func stored(refusalId: UUID, archiveId: UUID, studyKey: String, actor: String) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                UPDATE sage_refused_archives SET archive_id = \(archiveId), reprocessed_at = now()
                WHERE refusal_id = \(refusalId) AND study_key = \(studyKey)
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO audit_events (actor, action, study_id, details)
                VALUES (\(actor), 'sage.archive_reprocessed', \(studyKey),
                        jsonb_build_object('refusalId', \(refusalId.uuidString.lowercased())::text,
                                           'archiveId', \(archiveId.uuidString.lowercased())::text))
                """, logger: logger)
        }
    }

    /// A reprocessing refused the kept archive again, for `reason`.
    package func refusedAgain(refusalId: UUID, studyKey: String, reason: String, problems: [ValidationProblem]) async throws {
        let problemsJSON = String(decoding: try JSONEncoder().encode(problems), as: UTF8.self)
        try await client.query(
            """
            UPDATE sage_refused_archives
            SET reason = \(reason), problems = \(problemsJSON)::jsonb, times_refused = times_refused + 1, last_refused_at = now()
            WHERE refusal_id = \(refusalId) AND study_key = \(studyKey)
            """, logger: logger)
    }

    /// The kept archive's bytes as they arrived, or nil when the study has none by that id.
    package func content(studyKey: String, refusalId: UUID) async throws -> [UInt8]? {
        let rows = try await client.query(
            "SELECT content FROM sage_refused_archives WHERE study_key = \(studyKey) AND refusal_id = \(refusalId)", logger: logger)
        for try await content in rows.decode(ByteBuffer.self) { return Array(buffer: content) }
        return nil
    }
}
