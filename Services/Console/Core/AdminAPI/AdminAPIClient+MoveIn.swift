import AdminContracts
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
}
