import AdminAuthHTTP
import Foundation
import Hummingbird
import ResponseCore
import ServiceKitHTTP
import StudyModels

extension RemoteAdminAuthenticator {
    /// The study in the path (`:studyId`), known here from study-metadata's events, and the
    /// admin, who must hold at least `role` on it.
    package func study(_ role: StudyRole, _ request: Request, _ context: ServiceRequestContext, catalog: StudyCatalog)
        async throws -> (StudyCatalog.Study, AdminIdentity)
    {
        let studyId = try context.parameters.decoded("studyId")
        let admin = try await authenticate(request, logger: context.logger)
        guard let study = try await catalog.study(studyId) else {
            throw ResponseAdminError.noStudy(studyId)
        }
        guard admin.may(role, on: study.studyId) else {
            throw ResponseAdminError.roleRequired(role, studyId: study.studyId)
        }
        return (study, admin)
    }
}
