import AdminAuthHTTP
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/adherence` (viewer): per activity, how many participants are
/// up to date, behind or not started. Counts only: nothing in it identifies anyone.
package struct AdminAdherenceRoutes: Sendable {
    package let adherence: AdherenceStore
    package let authenticator: RemoteAdminAuthenticator

    package init(adherence: AdherenceStore, authenticator: RemoteAdminAuthenticator) {
        self.adherence = adherence
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/admin/v1/studies/:studyId/adherence", use: show)
    }

    @Sendable package func show(_ request: Request, context: ServiceRequestContext) async throws -> ActivityAdherence {
        let studyId = try context.parameters.require("studyId")
        _ = try await authenticator.require(.viewer, on: studyId, request, logger: context.logger)
        return try await adherence.adherence(studyId: studyId)
    }
}

extension ActivityAdherence: ResponseEncodable {}
