import Foundation
import Hummingbird
import ResponseCore
import ServiceKitHTTP

extension StudyCatalog {
    /// The study in the path (`:studyId`), known here from study-metadata's events, or 404. The
    /// admin's access to it was checked when the route was entered (`AdminRouter`).
    package func inPath(_ context: ServiceRequestContext) async throws -> Study {
        let studyId = try context.parameters.decoded("studyId")
        guard let study = try await study(studyId) else { throw ResponseAdminError.noStudy(studyId) }
        return study
    }
}
