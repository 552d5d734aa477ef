import Crypto
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceKit

/// Bridge's three-step upload (docs/sage.md, The Bridge handshake): a session a participant
/// opens, the bytes put to its URL, and the session completed into an archive. The URL is the
/// only credential the PUT carries (as Bridge's pre-signed storage URLs are), so it holds a secret
/// from the CSPRNG, kept hashed, good until the session expires.
package struct SageUploadStore: Sendable {
    /// How long a session's URL takes bytes: a day, as Bridge's (Sage's clients reuse a session
    /// while more than 30 minutes of it remain).
    package static let lifetime: Duration = .seconds(24 * 3600)
    /// Sessions one participant may hold open (not completed, closed or expired). A phone back
    /// online after days opens one for each archive it queued, all at once: a week of a busy
    /// study's assessments fits. Bytes put wait at most minutes before the service completes
    /// them (`SageUploadCompletion`), so what open sessions hold is bounded by time, not count.
    package static let maxOpenPerParticipant = 500

    package struct Session: Sendable {
        package var id: UUID
        package var studyKey: String
        package var participantId: Int64
        package var contentLength: Int
        package var contentMD5: String
        package var contentType: String
        package var content: [UInt8]?
        package var archiveId: UUID?
        package var expired: Bool

        package init(
            id: UUID, studyKey: String, participantId: Int64, contentLength: Int, contentMD5: String, contentType: String,
            content: [UInt8]? = nil, archiveId: UUID? = nil, expired: Bool
        ) {
            self.id = id
            self.studyKey = studyKey
            self.participantId = participantId
            self.contentLength = contentLength
            self.contentMD5 = contentMD5
            self.contentType = contentType
            self.content = content
            self.archiveId = archiveId
            self.expired = expired
        }
    }

    package enum Opened: Sendable, Equatable {
        case opened(id: UUID, secret: String, expires: Date)
        case tooMany
    }

    package enum Put: Sendable, Equatable {
        case stored
        /// No session with that id and secret: the URL is wrong (or forged).
        case unknown
        case expired
        case completed
        case refused(String)
    }

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Opens a session for participant `participantId`, whose app token `appTokenHash` hashes:
    /// the service completes it by that token if the client does not (`SageUploadCompletion`).
    package func open(
        studyKey: String, participantId: Int64, appTokenHash: String, name: String, contentLength: Int, contentMD5: String,
        contentType: String, metadata: String
    ) async throws -> Opened {
        let id = UUID()
        let secret = SecureToken.generate()
        let expires = Date().addingTimeInterval(Double(Self.lifetime.components.seconds))
        return try await client.withTransaction(logger: logger) { connection -> Opened in
            // Expired sessions go first, unless they hold bytes not yet stored anywhere else: an
            // archive, or a refused archive's row, holds what was completed or refused.
            try await connection.query(
                """
                DELETE FROM sage_uploads WHERE participant_id = \(participantId) AND expires_at < now()
                AND (content IS NULL OR archive_id IS NOT NULL OR closed IS NOT NULL)
                """, logger: logger)
            let counted = try await connection.query(
                """
                SELECT count(*)::int FROM sage_uploads
                WHERE participant_id = \(participantId) AND archive_id IS NULL AND closed IS NULL AND expires_at >= now()
                """, logger: logger)
            for try await open in counted.decode(Int.self) where open >= Self.maxOpenPerParticipant { return .tooMany }
            try await connection.query(
                """
                INSERT INTO sage_uploads (id, secret_hash, study_key, participant_id, app_token_hash, name, content_length, content_md5,
                                          content_type, metadata, expires_at)
                VALUES (\(id), \(SecureToken.hash(secret)), \(studyKey), \(participantId), \(appTokenHash), \(name), \(contentLength),
                        \(contentMD5), \(contentType), \(metadata)::jsonb, \(expires))
                """, logger: logger)
            return .opened(id: id, secret: secret, expires: expires)
        }
    }

    /// An open session waiting for its bytes, as its URL found it.
    package struct Awaiting: Sendable, Equatable {
        package var id: UUID
        package var length: Int
        package var contentMD5: String
        package var contentType: String

        package init(id: UUID, length: Int, contentMD5: String, contentType: String) {
            self.id = id
            self.length = length
            self.contentMD5 = contentMD5
            self.contentType = contentType
        }

        /// Why a PUT with these headers cannot fill the session (nil when it can): known before
        /// the body is read.
        package func refusal(contentMD5 header: String?, contentType: String?) -> Put? {
            guard header == contentMD5 else { return .refused("Content-MD5 must be the contentMd5 the upload was requested with") }
            guard (contentType ?? "") == self.contentType else {
                return .refused("Content-Type must be the contentType the upload was requested with (\(self.contentType))")
            }
            return nil
        }

        /// Why `bytes` cannot fill the session (nil when they can).
        package func refusal(_ bytes: [UInt8]) -> Put? {
            guard bytes.count == length else { return .refused("the body is \(bytes.count) bytes; the upload was requested for \(length)") }
            guard Data(Insecure.MD5.hash(data: bytes)).base64EncodedString() == contentMD5 else {
                return .refused("the body's MD5 is not its Content-MD5: the bytes were damaged on the way")
            }
            return nil
        }
    }

    package enum Lookup: Sendable, Equatable {
        case awaiting(Awaiting)
        /// Unknown, expired or completed.
        case closed(Put)
    }

    /// Session `id`, when `secret` is its URL's: read before the body is, so a PUT to a wrong URL
    /// reads nothing, and a right one no more than its declared length.
    package func lookup(id: UUID, secret: String) async throws -> Lookup {
        let rows = try await client.query(
            """
            SELECT content_length, content_md5, content_type, archive_id IS NOT NULL, expires_at < now()
            FROM sage_uploads WHERE id = \(id) AND secret_hash = \(SecureToken.hash(secret))
            """, logger: logger)
        for try await (length, md5, type, completed, expired) in rows.decode((Int, String, String, Bool, Bool).self) {
            if completed { return .closed(.completed) }
            if expired { return .closed(.expired) }
            return .awaiting(Awaiting(id: id, length: length, contentMD5: md5, contentType: type))
        }
        return .closed(.unknown)
    }

    /// Fills `session` with `bytes` (checked against its length and MD5), unless it was completed
    /// or expired while they arrived.
    package func put(_ bytes: [UInt8], into session: Awaiting) async throws -> Put {
        if let refusal = session.refusal(bytes) { return refusal }
        let rows = try await client.query(
            """
            UPDATE sage_uploads SET content = \(ByteBuffer(bytes: bytes)), put_at = now()
            WHERE id = \(session.id) AND archive_id IS NULL AND closed IS NULL AND expires_at >= now() RETURNING id
            """, logger: logger)
        for try await _ in rows.decode(UUID.self) { return .stored }
        let rest = try await client.query(
            "SELECT archive_id IS NOT NULL FROM sage_uploads WHERE id = \(session.id)", logger: logger)
        for try await completed in rest.decode(Bool.self) { return completed ? .completed : .expired }
        return .unknown
    }

    /// Participant `participantId`'s session `id`, or nil when they have none by that id.
    package func session(id: UUID, participantId: Int64) async throws -> Session? {
        let rows = try await client.query(
            """
            SELECT study_key, content_length, content_md5, content_type, content, archive_id, expires_at < now()
            FROM sage_uploads WHERE id = \(id) AND participant_id = \(participantId)
            """, logger: logger)
        for try await (studyKey, length, md5, type, content, archiveId, expired) in rows.decode(
            (String, Int, String, String, ByteBuffer?, UUID?, Bool).self)
        {
            return Session(
                id: id, studyKey: studyKey, participantId: participantId, contentLength: length, contentMD5: md5, contentType: type,
                content: content.map { Array(buffer: $0) }, archiveId: archiveId, expired: expired)
        }
        return nil
    }

    /// The session became archive `archiveId`: its bytes are dropped (the archive keeps them).
    package func complete(id: UUID, archiveId: UUID) async throws {
        try await client.query(
            "UPDATE sage_uploads SET archive_id = \(archiveId), content = NULL WHERE id = \(id)", logger: logger)
    }

    // MARK: Completed by the service

    /// A session whose bytes were put and that its client has not completed.
    package struct Uncompleted: Sendable {
        package var id: UUID
        package var participantId: Int64
        package var appTokenHash: String?
        package var contentMD5: String
        package var content: [UInt8]
        package var attempts: Int

        package init(
            id: UUID, participantId: Int64, appTokenHash: String? = nil, contentMD5: String, content: [UInt8], attempts: Int
        ) {
            self.id = id
            self.participantId = participantId
            self.appTokenHash = appTokenHash
            self.contentMD5 = contentMD5
            self.content = content
            self.attempts = attempts
        }
    }

    /// How a session the service could not complete into an archive was closed.
    package enum Closed: String, Sendable {
        /// The archive was refused for its content, and kept as a refused archive.
        case refused
        /// No participant holds the token that opened it any longer (withdrawn, or enrolled
        /// again): its bytes are dropped, as a `complete` from them would be refused.
        case notAdmitted = "not_admitted"
    }

    /// Up to `limit` sessions put more than `grace` ago and not completed, closed or deleted,
    /// each due again only after a wait that doubles from a minute to an hour: taking one puts
    /// it off for that wait, so two replicas never take the same one together, and one that
    /// cannot be completed now (its study paused, the service busy) is taken again later.
    package func claimUncompleted(grace: Duration, limit: Int) async throws -> [Uncompleted] {
        let rows = try await client.query(
            """
            UPDATE sage_uploads u SET completion_attempts = u.completion_attempts + 1,
                next_completion_at = now() + make_interval(mins => least(power(2, least(u.completion_attempts, 6))::int, 60))
            FROM (
                SELECT id FROM sage_uploads
                WHERE content IS NOT NULL AND archive_id IS NULL AND closed IS NULL
                  AND put_at < now() - make_interval(secs => \(Double(grace.components.seconds)))
                  AND (next_completion_at IS NULL OR next_completion_at <= now())
                ORDER BY put_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
            ) due
            WHERE u.id = due.id
            RETURNING u.id, u.participant_id, u.app_token_hash, u.content_md5, u.content, u.completion_attempts
            """, logger: logger)
        var claimed: [Uncompleted] = []
        for try await (id, participantId, tokenHash, md5, content, attempts) in rows.decode(
            (UUID, Int64, String?, String, ByteBuffer, Int).self)
        {
            claimed.append(Uncompleted(
                id: id, participantId: participantId, appTokenHash: tokenHash, contentMD5: md5, content: Array(buffer: content),
                attempts: attempts))
        }
        return claimed
    }

    /// Closes session `id` without an archive; its bytes are dropped unless it was refused (they
    /// stay until it expires, so that a `complete` is answered with why).
    package func close(id: UUID, as closed: Closed) async throws {
        switch closed {
        case .refused:
            try await client.query("UPDATE sage_uploads SET closed = 'refused' WHERE id = \(id) AND archive_id IS NULL", logger: logger)
        case .notAdmitted:
            try await client.query(
                "UPDATE sage_uploads SET closed = 'not_admitted', content = NULL WHERE id = \(id) AND archive_id IS NULL",
                logger: logger)
        }
    }
}
