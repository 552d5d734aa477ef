import Foundation
import Logging
import PostgresNIO
import ServiceKit
import StudyModels

/// The participants of a study, as the admin API lists them.
package struct ParticipantDirectory: Sendable {
    package struct Query: Sendable {
        package var studyId: String
        package var status: String?
        /// Matches the start of a participant id, or (with `identities`) part of an e-mail.
        package var search: String?
        package var limit: Int
        package var after: UUID?
        /// Whether e-mail addresses are read (and may be searched).
        package var identities: Bool

        package init(studyId: String, status: String?, search: String?, limit: Int, after: UUID?, identities: Bool) {
            self.studyId = studyId
            self.status = status
            self.search = search
            self.limit = limit
            self.after = after
            self.identities = identities
        }
    }

    package let client: PostgresClient
    package let logger: Logger

    package init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// One page, in participant-id order (`after` continues from the last one).
    package func participants(_ query: Query) async throws -> ParticipantList {
        let search = query.search?.lowercased()
        let rows = try await client.query(
            """
            SELECT ps.pseudonym, CASE WHEN \(query.identities) THEN p.email ELSE NULL END, ps.status, ps.enrolled_at,
                   ps.withdrawn_at, ps.completion, ps.adherence,
                   coalesce((SELECT array_agg(c.version ORDER BY c.id) FROM consent_records c
                             WHERE c.user_id = ps.user_id AND c.study_id = ps.study_id AND c.status = 'completed'), '{}'),
                   (SELECT c.sharing FROM consent_records c
                    WHERE c.user_id = ps.user_id AND c.study_id = ps.study_id AND c.status = 'completed'
                    ORDER BY c.id DESC LIMIT 1),
                   (SELECT max(a.updated_at) FROM participant_activities a
                    WHERE a.user_id = ps.user_id AND a.study_id = ps.study_id)
            FROM participant_studies ps JOIN participants p ON p.user_id = ps.user_id
            WHERE ps.study_id = \(query.studyId)
              AND (\(query.status)::text IS NULL OR ps.status = \(query.status))
              AND (\(query.after)::uuid IS NULL OR ps.pseudonym > \(query.after))
              AND (\(search)::text IS NULL
                   OR left(ps.pseudonym::text, length(\(search))) = \(search)
                   OR (\(query.identities) AND position(\(search) IN p.email_key) > 0))
            ORDER BY ps.pseudonym
            LIMIT \(query.limit + 1)
            """, logger: logger)
        var found: [ParticipantList.Participant] = []
        var pseudonyms: [UUID] = []
        for try await (pseudonym, email, status, enrolled, withdrawn, completion, adherence, versions, sharing, lastActivity) in rows.decode(
            (UUID, String?, String, Date?, Date?, Int, Int, [String], String?, Date?).self)
        {
            pseudonyms.append(pseudonym)
            found.append(.init(
                participantId: pseudonym.uuidString.lowercased(), email: email, status: status, enrolledAt: enrolled,
                withdrawnAt: withdrawn, consentVersions: versions, sharing: sharing, lastActivityAt: lastActivity,
                completion: completion, adherence: adherence))
        }
        let more = found.count > query.limit
        if more { found.removeLast() }
        return ParticipantList(
            participants: found, next: more ? pseudonyms[query.limit - 1].uuidString.lowercased() : nil, identities: query.identities)
    }
}
