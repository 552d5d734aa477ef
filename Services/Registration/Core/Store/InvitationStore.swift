import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// Invitations to a study: who was invited (to which site), their own enrollment token (sealed:
/// it is e-mailed again on a resend), and what became of it.
package struct InvitationStore: Sendable {
    /// An invitation's state, from its row and the participant who joined with it (`i` and `ps`).
    /// A constant: no input is ever put into it.
    package static let stateSQL = """
        CASE WHEN i.revoked_at IS NOT NULL THEN 'revoked'
             WHEN i.enrolled_at IS NOT NULL AND ps.status = 'Withdrawn' THEN 'withdrawn'
             WHEN i.enrolled_at IS NOT NULL THEN 'enrolled'
             WHEN i.expires_at <= now() THEN 'expired'
             ELSE 'invited' END
        """

    package struct New: Sendable {
        package var id: UUID
        package var email: String
        package var siteId: UUID?
        package var token: String
        package var expiresAt: Date

        package init(id: UUID, email: String, siteId: UUID?, token: String, expiresAt: Date) {
            self.id = id
            self.email = email
            self.siteId = siteId
            self.token = token
            self.expiresAt = expiresAt
        }
    }

    /// An invitation that may still be resent or revoked, locked for the caller's transaction.
    package struct Open: Sendable {
        package var id: UUID
        package var email: String
        package var token: String
        package var state: String
        package var sentCount: Int
        package var lastSentAt: Date

        package init(id: UUID, email: String, token: String, state: String, sentCount: Int, lastSentAt: Date) {
            self.id = id
            self.email = email
            self.token = token
            self.state = state
            self.sentCount = sentCount
            self.lastSentAt = lastSentAt
        }
    }

    package struct Query: Sendable {
        package var studyId: String
        package var state: String?
        package var siteId: UUID?
        /// Its `search` is part of an e-mail (with `identities`) or the beginning of an invitation id.
        package var page: ListPage
        package var identities: Bool
        /// Only these invitations.
        package var invitationIds: [UUID]?

        package init(studyId: String, page: ListPage, identities: Bool) {
            (self.studyId, self.page, self.identities) = (studyId, page, identities)
        }
    }

    package let client: PostgresClient
    package let seal: RowSeal
    package let logger: Logger

    package init(client: PostgresClient, seal: RowSeal, logger: Logger) {
        self.client = client
        self.seal = seal
        self.logger = logger
    }

    /// Which of these addresses (e-mail keys) already have an invitation to the study that is
    /// neither revoked nor used.
    package func openAddresses(studyId: String, emailKeys: [String]) async throws -> Set<String> {
        let rows = try await client.query(
            """
            SELECT email_key FROM invitations
            WHERE study_id = \(studyId) AND email_key = ANY(\(emailKeys)::text[]) AND revoked_at IS NULL AND enrolled_at IS NULL
            """, logger: logger)
        var found = Set<String>()
        for try await key in rows.decode(String.self) { found.insert(key) }
        return found
    }

    /// Writes the invitations in one statement. Throws a unique violation when an address got an
    /// open invitation since it was checked (another admin at the same moment).
    package func insert(_ invitations: [New], studyId: String, actor: String, on connection: PostgresConnection) async throws {
        var ids: [UUID] = []
        var emails: [String] = []
        var keys: [String] = []
        var sites: [String] = []
        var sealed: [String] = []
        var expiries: [Date] = []
        for invitation in invitations {
            ids.append(invitation.id)
            emails.append(invitation.email)
            keys.append(EmailKey.of(invitation.email))
            sites.append(invitation.siteId?.uuidString ?? "")
            sealed.append(Data(try seal.seal(invitation.token, row: invitation.id, studyId: studyId)).base64EncodedString())
            expiries.append(invitation.expiresAt)
        }
        try await connection.query(
            """
            INSERT INTO invitations (id, study_id, site_id, email, email_key, token_sealed, expires_at, created_by)
            SELECT id, \(studyId), nullif(site, '')::uuid, email, key, decode(sealed, 'base64'), expires, \(actor)
            FROM unnest(\(ids)::uuid[], \(sites)::text[], \(emails)::text[], \(keys)::text[], \(sealed)::text[],
                        \(expiries)::timestamptz[]) AS t (id, site, email, key, sealed, expires)
            """, logger: logger)
    }

    /// One page in invitation-id order, or the invitations `invitationIds` names.
    package func invitations(_ query: Query) async throws -> InvitationList {
        let search = ListSearch(query.page.search)
        let rows = try await client.query(
            """
            SELECT i.id, CASE WHEN \(query.identities) THEN i.email ELSE NULL END, i.site_id, s.name,
                   \(unescaped: Self.stateSQL), i.created_at, i.expires_at, i.last_sent_at, i.sent_count, i.enrolled_at,
                   ps.pseudonym, CASE WHEN \(query.identities) AND p.user_id IS NOT NULL THEN p.email_key = i.email_key END,
                   ps.participant_token_hash
            FROM invitations i
            LEFT JOIN study_sites s ON s.id = i.site_id
            LEFT JOIN participant_studies ps ON ps.user_id = i.user_id AND ps.study_id = i.study_id
            LEFT JOIN participants p ON p.user_id = i.user_id
            WHERE i.study_id = \(query.studyId)
              AND (\(query.invitationIds)::uuid[] IS NULL OR i.id = ANY(\(query.invitationIds)::uuid[]))
              AND (\(query.page.after)::uuid IS NULL OR i.id > \(query.page.after))
              AND (\(query.siteId)::uuid IS NULL OR i.site_id = \(query.siteId))
              AND (\(query.state)::text IS NULL OR \(unescaped: Self.stateSQL) = \(query.state))
              AND (\(search?.emailPattern)::text IS NULL
                   OR i.id BETWEEN \(search?.firstId)::uuid AND \(search?.lastId)::uuid
                   OR (\(query.identities) AND i.email_key LIKE \(search?.emailPattern)::text))
            ORDER BY i.id
            LIMIT \(KeysetPage<Invitation, String>.fetchLimit(query.page.limit))
            """, logger: logger)
        var found: [Invitation] = []
        for try await row in rows {
            let (id, email, site, siteName, state, created, expires, sent, count, enrolled, pseudonym, same, tokenHash) = try row.decode(
                (UUID, String?, UUID?, String?, String, Date, Date, Date, Int, Date?, UUID?, Bool?, String?).self)
            found.append(Invitation(
                invitationId: id.uuidString.lowercased(), email: email, siteId: site?.uuidString.lowercased(), siteName: siteName,
                state: state, createdAt: created, expiresAt: expires, lastSentAt: sent, sentCount: count, enrolledAt: enrolled,
                participantId: pseudonym?.uuidString.lowercased(), sameEmail: same, appTokenSHA256: tokenHash))
        }
        let page = KeysetPage(found, limit: query.page.limit, key: \.invitationId)
        return InvitationList(invitations: page.items, next: page.next, identities: query.identities)
    }

    package func invitation(studyId: String, id: UUID, identities: Bool) async throws -> Invitation? {
        var one = Query(studyId: studyId, page: .one, identities: identities)
        one.invitationIds = [id]
        return try await invitations(one).invitations.first
    }

    /// The invitation, locked, when it is still `invited` or `expired` (so it may be resent or
    /// revoked); nil when there is none. Its state is returned either way.
    package func lock(studyId: String, id: UUID, on connection: PostgresConnection) async throws -> Open? {
        let rows = try await connection.query(
            """
            SELECT i.email, i.token_sealed, \(unescaped: Self.stateSQL), i.sent_count, i.last_sent_at
            FROM invitations i LEFT JOIN participant_studies ps ON ps.user_id = i.user_id AND ps.study_id = i.study_id
            WHERE i.study_id = \(studyId) AND i.id = \(id)
            FOR UPDATE OF i
            """, logger: logger)
        for try await (email, sealed, state, sent, last) in rows.decode((String, ByteBuffer, String, Int, Date).self) {
            guard let token = seal.open(Array(buffer: sealed), row: id, studyId: studyId) else {
                throw InvitationSealBroken()
            }
            return Open(id: id, email: email, token: token, state: state, sentCount: sent, lastSentAt: last)
        }
        return nil
    }

    package struct InvitationSealBroken: Error {}

    /// The invitation e-mails sent in the last day for `studyId` and by `actor`. The counts are
    /// taken under advisory locks held to the transaction's end, so concurrent senders are
    /// counted one after the other; sends older than a day are forgotten first.
    package func mailSentToday(studyId: String, actor: String, on connection: PostgresConnection) async throws
        -> (study: Int, actor: Int)
    {
        try await connection.query(
            """
            SELECT pg_advisory_xact_lock(hashtextextended('invitation-mail:study:' || \(studyId), 0)),
                   pg_advisory_xact_lock(hashtextextended('invitation-mail:actor:' || \(actor), 0))
            """, logger: logger)
        try await connection.query(
            "DELETE FROM invitation_sends WHERE study_id = \(studyId) AND sent_at < now() - interval '1 day'", logger: logger)
        let rows = try await connection.query(
            """
            SELECT (SELECT count(*) FROM invitation_sends WHERE study_id = \(studyId) AND sent_at >= now() - interval '1 day')::int,
                   (SELECT count(*) FROM invitation_sends WHERE actor = \(actor) AND sent_at >= now() - interval '1 day')::int
            """, logger: logger)
        for try await (study, byActor) in rows.decode((Int, Int).self) { return (study, byActor) }
        return (0, 0)
    }

    /// Records the e-mails of `invitationIds` as sent by `actor` for `studyId`.
    package func recordSends(_ invitationIds: [UUID], studyId: String, actor: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO invitation_sends (invitation_id, study_id, actor)
            SELECT id, \(studyId), \(actor) FROM unnest(\(invitationIds)) AS id
            """, logger: logger)
    }

    package func markResent(id: UUID, expiresAt: Date, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE invitations SET expires_at = \(expiresAt), sent_count = sent_count + 1, last_sent_at = now()
            WHERE id = \(id)
            """, logger: logger)
    }

    package func markRevoked(id: UUID, on connection: PostgresConnection) async throws {
        try await connection.query("UPDATE invitations SET revoked_at = now() WHERE id = \(id)", logger: logger)
    }

    package enum EnrollmentRecord: Sendable, Equatable {
        case recorded, repeated, unknown
    }

    /// The response service says the invitation's token was spent. Records it (once) and, when the
    /// app has already reported the participant id, links the account and its site.
    package func recordEnrollment(_ enrollment: InvitationEnrollment, on connection: PostgresConnection) async throws
        -> EnrollmentRecord
    {
        let rows = try await connection.query(
            """
            UPDATE invitations i SET enrolled_at = coalesce(i.enrolled_at, \(enrollment.enrolledAt)),
                participant_token_hash = \(enrollment.participantTokenHash)
            FROM (SELECT id, enrolled_at IS NOT NULL AS before FROM invitations
                  WHERE id = \(enrollment.invitationId) AND study_id = \(enrollment.studyId) FOR UPDATE) old
            WHERE i.id = old.id
            RETURNING old.before
            """, logger: logger)
        var outcome = EnrollmentRecord.unknown
        for try await before in rows.decode(Bool.self) { outcome = before ? .repeated : .recorded }
        guard outcome != .unknown else { return .unknown }
        try await Self.serialize(studyId: enrollment.studyId, participantTokenHash: enrollment.participantTokenHash, on: connection, logger: logger)
        try await connection.query(
            """
            WITH joined AS (
                SELECT user_id FROM participant_studies
                WHERE study_id = \(enrollment.studyId) AND participant_token_hash = \(enrollment.participantTokenHash)
                LIMIT 1
            ), linked AS (
                UPDATE invitations SET user_id = (SELECT user_id FROM joined)
                WHERE id = \(enrollment.invitationId) AND EXISTS (SELECT 1 FROM joined)
                RETURNING site_id, user_id
            )
            UPDATE participant_studies ps SET site_id = linked.site_id
            FROM linked WHERE ps.user_id = linked.user_id AND ps.study_id = \(enrollment.studyId)
            """, logger: logger)
        return outcome
    }

    /// The app reported a participant id for the study (`updateStudyState`): when an invitation
    /// was spent for it, the account and its site are linked to it.
    package static func link(
        userId: UUID, studyId: String, participantTokenHash: String, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await serialize(studyId: studyId, participantTokenHash: participantTokenHash, on: connection, logger: logger)
        try await connection.query(
            """
            WITH linked AS (
                UPDATE invitations SET user_id = \(userId)
                WHERE study_id = \(studyId) AND participant_token_hash = \(participantTokenHash)
                RETURNING site_id
            )
            UPDATE participant_studies SET site_id = (SELECT site_id FROM linked LIMIT 1)
            WHERE user_id = \(userId) AND study_id = \(studyId) AND EXISTS (SELECT 1 FROM linked)
            """, logger: logger)
    }

    /// The two halves of a link (the response service's word and the app's report) may arrive at
    /// the same moment, each in a transaction the other cannot see yet. Each side writes its half,
    /// then takes this lock before looking for the other's: whichever comes second waits for the
    /// first to commit, and so finds its half and links.
    static func serialize(studyId: String, participantTokenHash: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended(\("invitation-link:\(studyId):\(participantTokenHash)"), 0))",
            logger: logger)
    }

    /// The SHA-256 (hex) of a participant id, the form both services compare.
    package static func participantTokenHash(_ participantId: String) -> String {
        SecureToken.hash(participantId)
    }
}
