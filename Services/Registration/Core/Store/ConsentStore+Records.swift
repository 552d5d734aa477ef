import Foundation
import PostgresNIO
import ServiceKit
import StudyModels

extension ConsentStore {
    /// A study's consent records linked to a participant, as the response service's FHIR API
    /// asks for them (`InternalCalls.consentRecords`), or their count.
    ///
    /// A record ends when a later completed record of the same participant replaces it or the
    /// participant leaves the study (`left_at`, kept by migration 22's triggers); its data-sharing choice is the latest given up to it (a re-consent
    /// gives none). Both are read per record through `consent_records_study`, so a page costs
    /// its own rows whatever the study's size.
    package func records(studyId: String, query: ConsentRecordQuery) async throws -> ConsentRecordPage {
        // The bounds travel as whole milliseconds (`PreciseInstants`): read back, each is put
        // on its millisecond again, as the driver truncates to the microsecond.
        func grid(_ date: Date?) -> Date? {
            date.map { PreciseInstants.instant(milliseconds: PreciseInstants.milliseconds($0, up: false)) }
        }
        let given = query.changed ?? .init()
        let changed = ConsentRecordQuery.Changed(ge: grid(given.ge), gt: grid(given.gt), le: grid(given.le), lt: grid(given.lt))
        let limit: Int? = query.counting ? nil : query.limit
        // Fixed texts, never input: what is selected, and the order of a page.
        let selected =
            query.counting
            ? "count(*)"
            : """
            c.id, c.participant_token_hash, c.version, c.status, c.eligibility, coalesce(s.sharing, ''), c.created_at, e.ended_at,
            c.pdf_sha256, c.pdf_bytes
            """
        let rows = try await client.query(
            """
            SELECT \(unescaped: selected)
            FROM consent_records c
            CROSS JOIN LATERAL (
                SELECT least(
                    (SELECT min(l.created_at) FROM consent_records l
                     WHERE l.user_id = c.user_id AND l.study_id = c.study_id AND l.id > c.id AND l.status = 'completed'),
                    c.left_at
                ) AS ended_at
            ) e
            LEFT JOIN LATERAL (
                SELECT p.sharing FROM consent_records p
                WHERE p.user_id = c.user_id AND p.study_id = c.study_id AND p.id <= c.id AND p.sharing <> ''
                ORDER BY p.id DESC LIMIT 1
            ) s ON true
            WHERE c.study_id = \(studyId) AND c.participant_token_hash IS NOT NULL AND c.id > \(query.after ?? 0)
              AND (\(query.ids)::bigint[] IS NULL OR c.id = ANY(\(query.ids)::bigint[]))
              AND (\(query.participantTokenSHA256s)::text[] IS NULL OR c.participant_token_hash = ANY(\(query.participantTokenSHA256s)::text[]))
              AND (\(query.state?.rawValue)::text IS NULL OR \(query.state?.rawValue)::text =
                   CASE WHEN e.ended_at IS NOT NULL THEN 'ended' WHEN c.status = 'pending' THEN 'pending' ELSE 'inForce' END)
              AND (\(changed.ge)::timestamptz IS NULL OR greatest(c.created_at, e.ended_at) >= \(changed.ge))
              AND (\(changed.gt)::timestamptz IS NULL OR greatest(c.created_at, e.ended_at) > \(changed.gt))
              AND (\(changed.le)::timestamptz IS NULL OR greatest(c.created_at, e.ended_at) <= \(changed.le))
              AND (\(changed.lt)::timestamptz IS NULL OR greatest(c.created_at, e.ended_at) < \(changed.lt))
            \(unescaped: query.counting ? "" : "ORDER BY c.id") LIMIT \(limit)
            """, logger: logger)
        if query.counting {
            for try await count in rows.decode(Int64.self) { return ConsentRecordPage(records: [], count: Int(count)) }
            return ConsentRecordPage(records: [], count: 0)
        }
        var records: [ConsentRecord] = []
        for try await (id, hash, version, status, eligibility, sharing, signedAt, endedAt, digest, bytes) in rows.decode(
            (Int64, String, String, String, Bool?, String, Date, Date?, String?, Int?).self)
        {
            let state: ConsentRecordState = endedAt != nil ? .ended : status == "pending" ? .pending : .inForce
            records.append(ConsentRecord(
                id: id, participantTokenSHA256: hash, version: version, state: state, completed: status == "completed",
                eligibility: eligibility, sharing: sharing,
                signedAt: signedAt, endedAt: endedAt, pdfSHA256: digest, pdfBytes: bytes))
        }
        return ConsentRecordPage(records: records)
    }

    /// Record `consentId` of the study, when it is linked to a participant (as `records` lists it).
    package func linkedRecord(consentId: Int64, studyId: String) async throws -> Record? {
        let rows = try await client.query(
            """
            SELECT version, status, sharing, pdf_key, pdf_sha256 FROM consent_records
            WHERE id = \(consentId) AND study_id = \(studyId) AND participant_token_hash IS NOT NULL
            """, logger: logger)
        for try await (version, status, sharing, key, digest) in rows.decode((String, String, String, String?, String?).self) {
            return Record(version: version, status: status, sharing: sharing, pdfKey: key, pdfSHA256: digest)
        }
        return nil
    }
}
