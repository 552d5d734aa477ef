import Foundation
import PostgresNIO
import StudyModels

extension ConsentStore {
    /// Rows of a study's consent history read a page at a time.
    package static let historyPage = 2_000

    /// The columns of the consent history export, in order.
    package static let historyColumns = [
        "participantId", "consentId", "version", "status", "sharing", "recordedAt", "leftAt", "pdfSHA256", "pdfBytes",
    ]

    /// Every consent record of the study, oldest first, `historyPage` at a time (keyset by id,
    /// by the study's index), each as the export's fields: the participant's id in the study
    /// (empty when their account was deleted), and the times as ISO 8601 in UTC.
    package func forEachHistoryPage(studyId: String, _ body: ([[String]]) async throws -> Void) async throws {
        var after: Int64 = 0
        while true {
            let rows = try await client.query(
                """
                SELECT c.id, ps.pseudonym, c.version, c.status, c.sharing, c.created_at, c.left_at, c.pdf_sha256, c.pdf_bytes
                FROM consent_records c
                LEFT JOIN participant_studies ps ON ps.user_id = c.user_id AND ps.study_id = c.study_id
                WHERE c.study_id = \(studyId) AND c.id > \(after)
                ORDER BY c.id LIMIT \(Self.historyPage)
                """, logger: logger)
            var page: [[String]] = []
            for try await (id, pseudonym, version, status, sharing, created, left, digest, bytes) in rows.decode(
                (Int64, UUID?, String, String, String, Date, Date?, String?, Int?).self)
            {
                after = id
                page.append([
                    pseudonym?.uuidString.lowercased() ?? "", String(id), version, status, sharing, created.formatted(.iso8601),
                    left?.formatted(.iso8601) ?? "", digest ?? "", bytes.map(String.init) ?? "",
                ])
            }
            if !page.isEmpty { try await body(page) }
            if page.count < Self.historyPage { return }
        }
    }
}
