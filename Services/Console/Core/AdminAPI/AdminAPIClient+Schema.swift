import AdminContracts
import Logging
import ServiceKit
import StudyModels

/// A schema study's calls, for the console's schema app pages.
extension AdminAPIClient {
    /// Imports a protocol into the study (a new one in `appId`, with its schedules in `timeZone`).
    package func importSchema(
        _ protocolText: [UInt8], into studyId: String, appId: String? = nil, timeZone: String? = nil, assignment: String? = nil,
        token: String, logger: Logger
    ) async throws(AdminAPIError) -> SchemaImportResult {
        try await call(
            AdminCalls.importSchema, ["studyId": studyId],
            query: [("appId", appId ?? ""), ("timeZone", timeZone ?? ""), ("assignment", assignment ?? "")], body: JSONBytes(protocolText),
            token: token, logger: logger)
    }

    /// Where the app finds the study; nil when the study was not imported from a protocol.
    package func schemaInfo(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> SchemaStudyInfo? {
        do {
            return try await call(AdminCalls.schemaInfo, ["studyId": studyId], token: token, logger: logger)
        } catch where error.status == 404 {
            return nil
        }
    }

    /// The arms' counts and a page of participants; an empty list while the response service
    /// has not heard of the study (it has never been published).
    package func schemaParticipants(
        of studyId: String, after: Int64?, token: String, logger: Logger
    ) async throws(AdminAPIError) -> SchemaParticipantList {
        do {
            return try await call(
                AdminCalls.schemaParticipants, ["studyId": studyId], query: [("limit", "100"), ("after", after.map(String.init) ?? "")],
                token: token, logger: logger)
        } catch where error.status == 404 {
            return SchemaParticipantList(arms: [], participants: [], next: nil)
        }
    }
}
