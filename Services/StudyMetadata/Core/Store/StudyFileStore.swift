import Crypto
import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceKit
import StudyModels

/// Images and PDFs uploaded for a study: checked by their content, bounded in size and number,
/// stored in the database with the study, and served by a random id that never changes.
package struct StudyFileStore: Sendable {
    package let client: PostgresClient
    package let audit: AuditLog
    package let logger: Logger
    /// The public address the apps reach this service at (the files' URLs start with it).
    package let publicBase: URL

    package init(client: PostgresClient, audit: AuditLog, logger: Logger, publicBase: URL) {
        self.client = client
        self.audit = audit
        self.logger = logger
        self.publicBase = publicBase
    }

    /// The path the apps fetch a file at.
    package static func path(_ fileId: UUID) -> String { "/StudyMetaData/files/\(fileId.uuidString.lowercased())" }

    package func url(_ fileId: UUID) -> String {
        var base = publicBase.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base + Self.path(fileId)
    }

    /// Stores `content` for the study, with its audit event; refusals are `StudyMetadataError`s
    /// (nothing is stored then).
    package func upload(_ content: ByteBuffer, name: String, studyId: String, by actor: String) async throws -> StudyFile {
        guard let kind = UploadedFileKind.of(content.readableBytesView) else { throw StudyMetadataError.notAnUploadableFile }
        guard content.readableBytes <= kind.maxBytes else {
            throw StudyMetadataError.fileTooLarge(kind: kind, bytes: content.readableBytes)
        }
        let fileId = UUID()
        let displayName = UploadedFileKind.displayName(name)
        let sha256 = SHA256.hash(data: content.readableBytesView).hexString
        let stored = try await client.withTransaction(logger: logger) { connection -> Result<Date, StudyMetadataError> in
            // The study, locked: one upload at a time per study, so the count below holds when the
            // row goes in; a closed study's draft no longer changes, so it takes no file either.
            var status: String?
            for try await value in try await connection.query(
                "SELECT status FROM studies WHERE study_id = \(studyId) FOR UPDATE", logger: logger
            ).decode(String.self) { status = value }
            guard let status else { return .failure(.noStudy(studyId)) }
            guard status != StudyStatus.deactivated.rawValue else { return .failure(.closed(studyId: studyId)) }
            let rows = try await connection.query(
                "SELECT count(*)::int FROM study_files WHERE study_id = \(studyId)", logger: logger)
            var count = 0
            for try await value in rows.decode(Int.self) { count = value }
            guard count < UploadedFileKind.maxPerStudy else { return .failure(.tooManyFiles(studyId: studyId)) }
            let inserted = try await connection.query(
                """
                INSERT INTO study_files (file_id, study_id, name, content_type, bytes, sha256, content, uploaded_by)
                VALUES (\(fileId), \(studyId), \(displayName), \(kind.rawValue), \(content.readableBytes), \(sha256), \(content), \(actor))
                RETURNING uploaded_at
                """, logger: logger)
            var at = Date()
            for try await value in inserted.decode(Date.self) { at = value }
            try await audit.record(
                actor: actor, action: "study.file_uploaded", studyId: studyId,
                details: ["fileId": fileId.uuidString.lowercased(), "name": displayName, "contentType": kind.rawValue,
                          "bytes": String(content.readableBytes), "sha256": sha256],
                on: connection)
            return .success(at)
        }
        return StudyFile(
            fileId: fileId.uuidString.lowercased(), name: displayName, contentType: kind.rawValue, bytes: content.readableBytes,
            sha256: sha256, url: url(fileId), uploadedAt: try stored.get(), uploadedBy: actor)
    }

    /// The study's files, newest first (without their content).
    package func list(studyId: String) async throws -> [StudyFile] {
        let rows = try await client.query(
            """
            SELECT file_id, name, content_type, bytes, sha256, uploaded_at, uploaded_by FROM study_files
            WHERE study_id = \(studyId) ORDER BY uploaded_at DESC, file_id
            """, logger: logger)
        var files: [StudyFile] = []
        for try await (id, name, type, bytes, sha, at, by) in rows.decode((UUID, String, String, Int, String, Date, String).self) {
            files.append(StudyFile(
                fileId: id.uuidString.lowercased(), name: name, contentType: type, bytes: bytes, sha256: sha, url: url(id),
                uploadedAt: at, uploadedBy: by))
        }
        return files
    }

    /// A file as the apps fetch it: its type, name and content; nil for an unknown id.
    package func content(_ fileId: UUID) async throws -> (contentType: String, name: String, sha256: String, content: ByteBuffer)? {
        let rows = try await client.query(
            "SELECT content_type, name, sha256, content FROM study_files WHERE file_id = \(fileId)", logger: logger)
        for try await (type, name, sha, content) in rows.decode((String, String, String, ByteBuffer).self) {
            return (type, name, sha, content)
        }
        return nil
    }
}
