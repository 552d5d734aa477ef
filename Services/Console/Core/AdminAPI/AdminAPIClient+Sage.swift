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
