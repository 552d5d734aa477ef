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
        /// Its `search` matches the start of a participant id, or (with `identities`) part of an
        /// e-mail.
        package var page: ListPage
        /// Whether e-mail addresses are read (and may be searched).
        package var identities: Bool
        /// One participant only.
        package var participantId: UUID?
        /// Those who joined through an invitation to this site.
        package var siteId: UUID?
        /// The one whose app reported the participant id with this SHA-256.
        package var appTokenSHA256: String?
        package var sort: ParticipantList.Sort = .participantId
        package var descending = false
        /// The consent versions a signature satisfies (`StudyStanding.consentVersionsInForce`).
        package var consentVersionsInForce: [String]?
        /// Only those who owe a signature of one of them.
        package var owingConsent = false

        package init(studyId: String, page: ListPage, identities: Bool) {
            (self.studyId, self.page, self.identities) = (studyId, page, identities)
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
        let search = ListSearch(query.page.search)
        var matched: [UUID]?
        if let search { matched = try await matches(search, studyId: query.studyId, identities: query.identities) }
        var owing: [UUID]?
        if query.owingConsent { owing = try await owingAccounts(studyId: query.studyId, inForce: query.consentVersionsInForce) }
        // The accounts the page is read from by key, when a search or the owing filter names few
        // (both: those both name); the conditions below still decide who is listed.
        let candidates = [matched, owing].compactMap { $0 }.reduce(nil as [UUID]?) { found, next in
            guard let found else { return next }
            let kept = Set(next)
            return found.filter { kept.contains($0) }
        }
        // Fixed SQL chosen by the order asked for; the values are binds.
        let sorted = query.sort != .participantId
        let direction = query.descending ? "<" : ">"
        let rows = try await client.query(
            """
            SELECT ps.pseudonym, CASE WHEN \(query.identities) THEN p.email ELSE NULL END, ps.status, ps.enrolled_at,
                   ps.withdrawn_at,
                   -- Completion and adherence from the runs each activity's state reports (what the
                   -- participant's page lists), so the figures and the runs never disagree; the
                   -- app's own study figures only while it has reported no runs.
                   CASE WHEN runs.total > 0 THEN round(100.0 * runs.completed / runs.total)::int ELSE ps.completion END,
                   CASE WHEN runs.completed + runs.missed > 0
                        THEN round(100.0 * runs.completed / (runs.completed + runs.missed))::int ELSE ps.adherence END,
                   coalesce((SELECT array_agg(c.version ORDER BY c.id) FROM consent_records c
                             WHERE c.user_id = ps.user_id AND c.study_id = ps.study_id AND c.status = 'completed'), '{}'),
                   (SELECT c.sharing FROM consent_records c
                    WHERE c.user_id = ps.user_id AND c.study_id = ps.study_id AND c.status = 'completed'
                    ORDER BY c.id DESC LIMIT 1),
                   runs.last_activity,
                   ps.site_id, s.name, ps.participant_token_hash,
                   owes_consent(ps.signed, ps.status, \(query.consentVersionsInForce)::text[])
            FROM participant_studies ps JOIN participants p ON p.user_id = ps.user_id
            LEFT JOIN study_sites s ON s.id = ps.site_id
            CROSS JOIN LATERAL (
                SELECT max(a.updated_at) AS last_activity, coalesce(sum(a.runs_total), 0) AS total,
                       coalesce(sum(a.runs_completed), 0) AS completed, coalesce(sum(a.runs_missed), 0) AS missed
                FROM participant_activities a WHERE a.user_id = ps.user_id AND a.study_id = ps.study_id) runs
            WHERE ps.study_id = \(query.studyId)
              AND (\(query.siteId)::uuid IS NULL OR ps.site_id = \(query.siteId))
              AND (\(query.status)::text IS NULL OR ps.status = \(query.status))
              AND (\(query.page.after)::uuid IS NULL
                   OR (NOT \(sorted) AND ps.pseudonym \(unescaped: direction) \(query.page.after))
                   OR (\(sorted) AND (\(unescaped: Self.key(query.sort, "ps")), ps.pseudonym) \(unescaped: direction)
                       ((SELECT \(unescaped: Self.key(query.sort, "x")) FROM participant_studies x
                         WHERE x.study_id = ps.study_id AND x.pseudonym = \(query.page.after)), \(query.page.after)::uuid)))
              AND (\(query.participantId)::uuid IS NULL OR ps.pseudonym = \(query.participantId))
              AND (NOT \(query.owingConsent) OR owes_consent(ps.signed, ps.status, \(query.consentVersionsInForce)::text[]))
              AND (\(query.appTokenSHA256)::text IS NULL OR ps.participant_token_hash = \(query.appTokenSHA256))
              AND (\(candidates)::uuid[] IS NULL OR ps.user_id = ANY(\(candidates)::uuid[]))
              AND (\(search?.emailPattern)::text IS NULL OR \(matched)::uuid[] IS NOT NULL
                   OR ps.pseudonym BETWEEN \(search?.firstId)::uuid AND \(search?.lastId)::uuid
                   OR (\(query.identities) AND p.email_key LIKE \(search?.emailPattern)::text))
            ORDER BY \(unescaped: Self.order(query))
            LIMIT \(KeysetPage<ParticipantList.Participant, String>.fetchLimit(query.page.limit))
            """, logger: logger)
        var found: [ParticipantList.Participant] = []
        for try await row in rows {
            let (pseudonym, email, status, enrolled, withdrawn, completion, adherence, versions, sharing, lastActivity, site, siteName,
                 hash, owes) =
                try row.decode((UUID, String?, String, Date?, Date?, Int, Int, [String], String?, Date?, UUID?, String?, String?, Bool).self)
            found.append(.init(
                participantId: pseudonym.uuidString.lowercased(), email: email, status: status, enrolledAt: enrolled,
                withdrawnAt: withdrawn, consentVersions: versions, sharing: sharing, lastActivityAt: lastActivity,
                completion: completion, adherence: adherence, siteId: site?.uuidString.lowercased(), siteName: siteName,
                appTokenSHA256: hash, owesConsent: owes))
        }
        let page = KeysetPage(found, limit: query.page.limit, key: \.participantId)
        return ParticipantList(
            participants: page.items, next: page.next, identities: query.identities,
            consentVersionsInForce: query.consentVersionsInForce)
    }

    /// The most accounts a search reads by their keys.
    static let fewMatches = 1_000

    /// The accounts `search` matches (a participant id of the study starting so, an e-mail address
    /// containing it), read through the pseudonym and trigram indexes, when there are at most
    /// `fewMatches`: the page then reads those rows by key. Nil when there are more: matches are
    /// then common, and walking the study in the page's order finds a page of them soon. (A
    /// condition the planner cannot count, a sub-select in the page's own query, made it walk
    /// every participant of the study for a search that matched one.)
    private func matches(_ search: ListSearch, studyId: String, identities: Bool) async throws -> [UUID]? {
        var found: [UUID] = []
        for try await userId in try await client.query(
            """
            SELECT x.user_id FROM participant_studies x
            WHERE x.study_id = \(studyId) AND x.pseudonym BETWEEN \(search.firstId)::uuid AND \(search.lastId)::uuid
            UNION ALL
            SELECT m.user_id FROM participants m WHERE \(identities) AND m.email_key LIKE \(search.emailPattern)
            LIMIT \(Self.fewMatches + 1)
            """, logger: logger
        ).decode(UUID.self) { found.append(userId) }
        return found.count <= Self.fewMatches ? found : nil
    }

    /// The accounts of the study that owe a signature of a version in `inForce`, when there are
    /// at most `fewMatches`: the owing sets of versions signed are few (the kept tallies list
    /// them), and each leads to its participants through `participant_studies_in_progress_signed`.
    /// Nil when more owe: then they are common enough that walking the study in the page's order
    /// finds a page of them soon.
    private func owingAccounts(studyId: String, inForce: [String]?) async throws -> [UUID]? {
        var found: [UUID] = []
        for try await userId in try await client.query(
            """
            SELECT ps.user_id
            FROM (SELECT DISTINCT t.signed FROM study_participant_tallies t
                  WHERE t.study_id = \(studyId) AND t.in_progress > 0
                    AND owes_consent(t.signed, 'inProgress', \(inForce)::text[])) owing
            CROSS JOIN LATERAL (
                SELECT ps.user_id FROM participant_studies ps
                WHERE ps.study_id = \(studyId) AND ps.status = 'inProgress' AND ps.signed = owing.signed
                LIMIT \(Self.fewMatches + 1)) ps
            LIMIT \(Self.fewMatches + 1)
            """, logger: logger
        ).decode(UUID.self) { found.append(userId) }
        return found.count <= Self.fewMatches ? found : nil
    }

    /// The sort key of `alias`'s row. Fixed SQL for each order (nothing from the request goes
    /// in): a missing date sorts as the earliest, so the key is never null and a page continues
    /// from the previous page's last row by comparing (key, participant id).
    static func key(_ sort: ParticipantList.Sort, _ alias: String) -> String {
        switch sort {
        case .participantId: "\(alias).pseudonym"
        case .status: "\(alias).status COLLATE \"C\""
        case .enrolledAt: "coalesce(\(alias).enrolled_at, '-infinity'::timestamptz)"
        case .lastActivityAt:
            """
            coalesce((SELECT max(a.updated_at) FROM participant_activities a
                      WHERE a.user_id = \(alias).user_id AND a.study_id = \(alias).study_id), '-infinity'::timestamptz)
            """
        }
    }

    static func order(_ query: Query) -> String {
        let direction = query.descending ? "DESC" : "ASC"
        return query.sort == .participantId
            ? "ps.pseudonym \(direction)" : "\(key(query.sort, "ps")) \(direction), ps.pseudonym \(direction)"
    }

    /// One participant of the study with their account's state, consent history and activity
    /// states; nil when the study has no participant by that id.
    package func participant(
        studyId: String, participantId: UUID, identities: Bool, mayReadConsentPDFs: Bool, consentVersionsInForce: [String]? = nil
    ) async throws -> ParticipantDetail? {
        var one = Query(studyId: studyId, page: .one, identities: identities)
        one.participantId = participantId
        one.consentVersionsInForce = consentVersionsInForce
        guard
            let listed = try await participants(one).participants.first,
            let (userId, account, appTokenSHA256) = try await account(studyId: studyId, participantId: participantId)
        else { return nil }
        let consentRows = try await client.query(
            """
            SELECT id, version, status, eligibility, sharing, created_at, pdf_sha256, pdf_bytes FROM consent_records
            WHERE user_id = \(userId) AND study_id = \(studyId) ORDER BY id
            """, logger: logger)
        var consents: [ParticipantDetail.Consent] = []
        for try await (id, version, status, eligibility, sharing, created, digest, bytes) in consentRows.decode(
            (Int64, String, String, Bool?, String, Date, String?, Int?).self)
        {
            consents.append(.init(
                consentId: String(id), version: version, status: status, eligibility: eligibility, sharing: sharing,
                recordedAt: created, pdfSHA256: digest, pdfBytes: bytes))
        }
        let activityRows = try await client.query(
            """
            SELECT activity_id, activity_version, activity_state, activity_run_id, runs_total, runs_completed, runs_missed,
                   updated_at
            FROM participant_activities WHERE user_id = \(userId) AND study_id = \(studyId) ORDER BY activity_id
            """, logger: logger)
        var activities: [ParticipantDetail.Activity] = []
        for try await (id, version, state, run, total, completed, missed, updated) in activityRows.decode(
            (String, String, String, String, Int, Int, Int, Date).self)
        {
            activities.append(.init(
                activityId: id, version: version, state: state, runId: run, runsTotal: total, runsCompleted: completed,
                runsMissed: missed, updatedAt: updated))
        }
        return ParticipantDetail(
            participant: listed, account: account, consents: consents, activities: activities,
            mayReadConsentPDFs: mayReadConsentPDFs, appTokenSHA256: appTokenSHA256)
    }

    /// The study's participant whose app holds the participant id hashing to `appTokenSHA256`;
    /// nil when no app of theirs has reported it.
    package func participantId(studyId: String, appTokenSHA256: String) async throws -> UUID? {
        let rows = try await client.query(
            """
            SELECT pseudonym FROM participant_studies
            WHERE study_id = \(studyId) AND participant_token_hash = \(appTokenSHA256) ORDER BY pseudonym LIMIT 1
            """, logger: logger)
        for try await pseudonym in rows.decode(UUID.self) { return pseudonym }
        return nil
    }

    /// The account behind a study's participant id, its state, and the hash of the participant
    /// id its app holds (once the app has reported it).
    package func account(studyId: String, participantId: UUID) async throws
        -> (userId: UUID, state: AccountState, appTokenSHA256: String?)?
    {
        let rows = try await client.query(
            """
            SELECT p.user_id, p.verified, a.locked_until, p.disabled_at, ps.participant_token_hash
            FROM participant_studies ps JOIN participants p ON p.user_id = ps.user_id
            LEFT JOIN attempt_counters a ON a.subject = \(Accounts.loginSubjectPrefix) || p.user_id::text AND a.locked_until > now()
            WHERE ps.study_id = \(studyId) AND ps.pseudonym = \(participantId)
            """, logger: logger)
        for try await (userId, verified, lockedUntil, disabledAt, tokenHash) in rows.decode((UUID, Bool, Date?, Date?, String?).self) {
            return (userId, AccountState(verified: verified, lockedUntil: lockedUntil, disabledAt: disabledAt), tokenHash)
        }
        return nil
    }
}
