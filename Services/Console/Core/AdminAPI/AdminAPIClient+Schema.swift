import Foundation
import Logging
import StudyModels

/// A schema study's calls, for the console's schema app pages.
extension AdminAPIClient {
    /// Imports a protocol into the study (a new one in `appId`, with its schedules in `timeZone`).
    package func importSchema(
        _ protocolText: [UInt8], into studyId: String, appId: String? = nil, timeZone: String? = nil, assignment: String? = nil,
        token: String, logger: Logger
    ) async throws(AdminAPIError) -> SchemaImportResult {
        var query: [String] = []
        if let appId { query.append("appId=\(Self.query(appId))") }
        if let timeZone { query.append("timeZone=\(Self.query(timeZone))") }
        if let assignment { query.append("assignment=\(Self.query(assignment))") }
        let path = "/admin/v1/studies/\(Self.segment(studyId))/imports/schema" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        return try await json(.PUT, path, token: token, body: protocolText, as: SchemaImportResult.self, logger: logger)
    }

    /// Where the app finds the study; nil when the study was not imported from a protocol.
    package func schemaInfo(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> SchemaStudyInfo? {
        do {
            return try await json(
                .GET, "/admin/v1/studies/\(Self.segment(studyId))/schema", token: token, as: SchemaStudyInfo.self, logger: logger)
        } catch where error.status == 404 {
            return nil
        }
    }

    /// The arms' counts and a page of participants; an empty list while the response service
    /// has not heard of the study (it has never been published).
    package func schemaParticipants(
        of studyId: String, after: Int64?, token: String, logger: Logger
    ) async throws(AdminAPIError) -> SchemaParticipantList {
        let path = "/admin/v1/studies/\(Self.segment(studyId))/schema-participants?limit=100" + (after.map { "&after=\($0)" } ?? "")
        do {
            return try await json(.GET, path, on: .response, token: token, as: SchemaParticipantList.self, logger: logger)
        } catch where error.status == 404 {
            return SchemaParticipantList(arms: [], participants: [], next: nil)
        }
    }
}
