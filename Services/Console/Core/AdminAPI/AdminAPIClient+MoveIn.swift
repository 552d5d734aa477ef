import AdminContracts
import Foundation
import Logging
import ServiceKit
import StudyModels

extension AdminAPIClient {
    /// `POST /admin/v1/apps/{appId}/move-in/studies`: the report of a dry run or of the import.
    package func moveInStudies(
        appId: String, export: [UInt8], timeZone: String, dryRun: Bool, token: String, logger: Logger
    ) async throws(AdminAPIError) -> StudyMoveInReport {
        try await call(
            AdminCalls.moveInStudies, ["appId": appId], query: [("timeZone", timeZone), ("dryRun", dryRun ? "true" : "false")],
            body: JSONBytes(export), token: token, logger: logger)
    }

    /// `POST /admin/v1/apps/{appId}/move-in/participants`: one part of a participants export, as
    /// a dry run or imported (registration's answer).
    package func moveInParticipants(
        appId: String, part: MyStudiesParticipantExport, dryRun: Bool, token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantMoveInReport {
        let body: [UInt8]
        do {
            body = Array(try JSONEncoder().encode(part))
        } catch {
            throw AdminAPIError(status: nil, code: "encoding", message: "the part could not be written as JSON: \(error)")
        }
        return try await call(
            AdminCalls.moveInParticipants, ["appId": appId], query: [("dryRun", dryRun ? "true" : "false")], body: JSONBytes(body),
            token: token, logger: logger)
    }
}
