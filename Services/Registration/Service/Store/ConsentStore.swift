import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Consent submissions: each kept as its own row with the signed PDF's SHA-256 and storage key.
struct ConsentStore: Sendable {
    struct Record: Sendable {
        var version: String
        var status: String
        var sharing: String
        var pdfKey: String?
        var pdfSHA256: String?
    }

    let client: PostgresClient
    let storage: any ConsentStorage
    let audit: AuditLog
    let logger: Logger

    /// Stores the PDF (when given) first, then the record with its hash, with the audit event.
    func record(
        userId: UUID, appId: String, studyId: String, version: String, status: String, eligibility: Bool?, sharing: String,
        pdf: Data?
    ) async throws {
        var key: String?
        if let pdf { key = try await storage.store(pdf) }
        let digest = pdf.map { SHA256.hash(data: $0).hexString }
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO consent_records (user_id, app_id, study_id, version, status, eligibility, sharing, pdf_key,
                    pdf_sha256, pdf_bytes)
                VALUES (\(userId), \(appId), \(studyId), \(version), \(status), \(eligibility), \(sharing), \(key), \(digest),
                    \(pdf?.count))
                """, logger: logger)
            var details = ["version": version, "status": status, "sharing": sharing]
            if let digest { details["pdfSHA256"] = digest }
            try await audit.record(
                actor: userId.uuidString.lowercased(), action: "participant.consent", studyId: studyId, details: details,
                on: connection)
        }
    }

    /// The newest submission of `version`, or of any version when nil, that has a PDF.
    func latest(userId: UUID, studyId: String, version: String?) async throws -> Record? {
        let rows = try await client.query(
            """
            SELECT version, status, sharing, pdf_key, pdf_sha256 FROM consent_records
            WHERE user_id = \(userId) AND study_id = \(studyId) AND pdf_key IS NOT NULL
              AND (\(version)::text IS NULL OR version = \(version)::text)
            ORDER BY id DESC LIMIT 1
            """, logger: logger)
        for try await (version, status, sharing, key, digest) in rows.decode((String, String, String, String?, String?).self) {
            return Record(version: version, status: status, sharing: sharing, pdfKey: key, pdfSHA256: digest)
        }
        return nil
    }

    /// The stored PDF, checked against the hash recorded with it.
    func pdf(of record: Record) async throws -> Data? {
        guard let key = record.pdfKey else { return nil }
        let data = try await storage.load(key)
        guard SHA256.hash(data: data).hexString == record.pdfSHA256 else {
            throw ConsentStorageError(reason: "a stored consent PDF does not match its recorded hash")
        }
        return data
    }
}
