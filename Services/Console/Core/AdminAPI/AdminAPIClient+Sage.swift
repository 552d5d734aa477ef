import AdminContracts
import Logging
import NIOCore
import ServiceKit
import StudyModels

/// Sage assessments, for the console's import page and activity pages.
extension AdminAPIClient {
    /// Imports the assessment text as the draft's activity `identifier`.
    package func importAssessment(
        _ identifier: String, into studyId: String, document: [UInt8], token: String, logger: Logger
    ) async throws(AdminAPIError) -> AssessmentImportResult {
        try await call(
            AdminCalls.importAssessment, ["studyId": studyId, "identifier": identifier], body: JSONBytes(document), token: token,
            logger: logger)
    }

    /// The assessment as imported, as its JSON text.
    package func assessment(_ identifier: String, of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ByteBuffer {
        let reply = try await exchange(
            AdminCalls.assessment, ["studyId": studyId, "identifier": identifier], body: NoContent(), token: token, logger: logger)
        return reply.body
    }
}

/// Sage result archives and the study's certificate, at the response service.
extension AdminAPIClient {
    /// The archives refused for their content and kept, newest first (docs/sage.md, Refused archives).
    package func refusedSageArchives(of studyId: String, limit: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> SageRefusedArchiveList
    {
        try await call(
            AdminCalls.refusedSageArchives, ["studyId": studyId], query: [("limit", String(limit))], token: token, logger: logger)
    }

    /// Reads a kept archive again with the study as published now, storing it when it can be.
    package func reprocessRefusedSageArchive(_ refusalId: String, in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> SageReprocessed
    {
        try await call(AdminCalls.reprocessRefusedSageArchive, ["studyId": studyId, "refusalId": refusalId], token: token, logger: logger)
    }
}
