import Logging
import NIOCore
import StudyModels

/// Sage assessments, for the console's import page and activity pages.
extension AdminAPIClient {
    /// Imports the assessment text as the draft's activity `identifier`.
    package func importAssessment(
        _ identifier: String, into studyId: String, document: [UInt8], token: String, logger: Logger
    ) async throws(AdminAPIError) -> AssessmentImportResult {
        try await json(
            .PUT, "/admin/v1/studies/\(Self.segment(studyId))/draft/assessments/\(Self.segment(identifier))", token: token, body: document,
            as: AssessmentImportResult.self, logger: logger)
    }

    /// The assessment as imported, as its JSON text.
    package func assessment(_ identifier: String, of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ByteBuffer {
        try await send(.GET, "/admin/v1/studies/\(Self.segment(studyId))/assessments/\(Self.segment(identifier))", token: token, logger: logger).body
    }
}

/// Sage result archives and the study's certificate, at the response service.
extension AdminAPIClient {
    /// One participant's archives (their number in the response data), newest first.
    package func sageArchives(of studyId: String, participant: Int64, limit: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> SageArchiveList
    {
        try await json(
            .GET, "/admin/v1/studies/\(Self.segment(studyId))/sage/archives" + Self.queryString([("participant", String(participant)), ("limit", String(limit))]),
            on: .response, token: token, as: SageArchiveList.self, logger: logger)
    }

    /// The archives refused for their content and kept, newest first (docs/sage.md, Refused archives).
    package func refusedSageArchives(of studyId: String, limit: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> SageRefusedArchiveList
    {
        try await json(
            .GET, "/admin/v1/studies/\(Self.segment(studyId))/sage/refused" + Self.queryString([("limit", String(limit))]),
            on: .response, token: token, as: SageRefusedArchiveList.self, logger: logger)
    }

    /// Reads a kept archive again with the study as published now, storing it when it can be.
    package func reprocessRefusedSageArchive(_ refusalId: String, in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> SageReprocessed
    {
        try await json(
            .POST, "/admin/v1/studies/\(Self.segment(studyId))/sage/refused/\(Self.segment(refusalId))/reprocess", on: .response,
            token: token, as: SageReprocessed.self, logger: logger)
    }

    /// The response service's path of an archive's ZIP, or of one of its files.
    package static func sageArchivePath(_ archiveId: String, of studyId: String, file: String? = nil) -> String {
        "/admin/v1/studies/\(segment(studyId))/sage/archives/\(segment(archiveId))" + (file.map { "/file" + queryString([("name", $0)]) } ?? "")
    }

    package static func sageCertificatePath(of studyId: String) -> String {
        "/admin/v1/studies/\(segment(studyId))/sage/certificate"
    }
}
