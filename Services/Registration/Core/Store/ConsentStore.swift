import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceKit

/// Consent submissions: each kept as its own row with the signed PDF's SHA-256 and storage key.
package struct ConsentStore: Sendable {
    package struct Record: Sendable {
        package var version: String
        package var status: String
        package var sharing: String
        package var pdfKey: String?
        package var pdfSHA256: String?
    }

    package let client: PostgresClient
    package let storage: any ConsentStorage
    package let audit: AuditLog
    package let logger: Logger

    package init(client: PostgresClient, storage: any ConsentStorage, audit: AuditLog, logger: Logger) {
        self.client = client
        self.storage = storage
        self.audit = audit
        self.logger = logger
    }

    /// Why a document is not stored.
    enum Refusal: Sendable, Equatable {
        /// The account has not verified its e-mail address: it may not store documents yet.
        case notVerified
        /// The participant already has `maxPerStudy` documents for this study.
        case tooMany

        var error: RegistrationError {
            switch self {
            case .notVerified: .notVerified
            case .tooMany: .invalid("Too many consent documents for this study.")
            }
        }
    }

    /// Consent documents (records with a PDF) one participant may keep per study: a study asks
    /// for consent again only when its consent changes, so this is far more than any real use.
    package static let maxPerStudy = 20

    /// Stores the PDF (when given) first, then the record with its hash, with the audit event.
    /// The account row is locked while the documents are counted, so concurrent uploads cannot
    /// pass the limit together; a PDF stored for an upload that is then refused is removed.
    /// Refusals are `RegistrationError`s, thrown once the transaction has ended.
    package func record(
        userId: UUID, appId: String, studyId: String, version: String, status: String, eligibility: Bool?, sharing: String,
        pdf: Data?
    ) async throws {
        // A cheap check before the file is written; the locked one below decides.
        if let refusal = try await refusal(userId: userId, studyId: studyId, on: nil) { throw refusal.error }
        var key: String?
        if let pdf { key = try await storage.store(pdf) }
        let digest = pdf.map { SHA256.hash(data: $0).hexString }
        let refused = try await client.withTransaction(logger: logger) { connection -> Refusal? in
            if let refusal = try await refusal(userId: userId, studyId: studyId, on: connection) { return refusal }
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
            return nil
        }
        if let refused {
            if let key { try? await storage.remove(key) }
            throw refused.error
        }
    }

    /// Why the participant may not store another document for the study, if they may not. With a
    /// connection, the account row is locked for the rest of its transaction.
    private func refusal(userId: UUID, studyId: String, on connection: PostgresConnection?) async throws -> Refusal? {
        let query: PostgresQuery = """
            SELECT p.verified,
                   (SELECT count(*)::int FROM consent_records c
                    WHERE c.user_id = p.user_id AND c.study_id = \(studyId) AND c.pdf_key IS NOT NULL)
            FROM participants p WHERE p.user_id = \(userId)
            \(unescaped: connection == nil ? "" : "FOR UPDATE OF p")
            """
        let rows = if let connection { try await connection.query(query, logger: logger) } else {
            try await client.query(query, logger: logger)
        }
        for try await (verified, documents) in rows.decode((Bool, Int).self) {
            if !verified { return .notVerified }
            return documents >= Self.maxPerStudy ? .tooMany : nil
        }
        return .notVerified
    }

    /// The newest submission of `version`, or of any version when nil, that has a PDF.
    package func latest(userId: UUID, studyId: String, version: String?) async throws -> Record? {
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

    /// One consent record of the participant's in the study, by its id.
    package func record(consentId: Int64, userId: UUID, studyId: String) async throws -> Record? {
        let rows = try await client.query(
            """
            SELECT version, status, sharing, pdf_key, pdf_sha256 FROM consent_records
            WHERE id = \(consentId) AND user_id = \(userId) AND study_id = \(studyId)
            """, logger: logger)
        for try await (version, status, sharing, key, digest) in rows.decode((String, String, String, String?, String?).self) {
            return Record(version: version, status: status, sharing: sharing, pdfKey: key, pdfSHA256: digest)
        }
        return nil
    }

    /// The stored PDF, checked against the hash recorded with it.
    package func pdf(of record: Record) async throws -> Data? {
        guard let key = record.pdfKey else { return nil }
        let data = try await storage.load(key)
        guard SHA256.hash(data: data).hexString == record.pdfSHA256 else {
            throw ConsentStorageError(reason: "a stored consent PDF does not match its recorded hash")
        }
        return data
    }
}
