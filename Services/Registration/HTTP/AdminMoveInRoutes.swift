import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /admin/v1/apps/{appId}/move-in/participants?dryRun=`: one part of what `studystack-import
/// participants read` read from a MyStudies 2.x deployment's databases becomes the app's
/// participants (docs/moving-in.md). A dry run (`dryRun=true`, the default) reports and writes
/// nothing; `dryRun=false` imports. The body is bounded by the service's body limit.
package struct AdminMoveInRoutes: Sendable {
    package let moveIns: ParticipantMoveIns

    package init(moveIns: ParticipantMoveIns) {
        self.moveIns = moveIns
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.moveInParticipants, use: moveIn)
    }

    @Sendable package func moveIn(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ParticipantMoveInReport {
        let appId = try context.parameters.decoded("appId")
        let dryRun = try request.dryRun()
        let export = try await DocumentBody.decode(MyStudiesParticipantExport.self, named: "export", from: request, context: context)
        return try await moveIns.run(export, appId: appId, dryRun: dryRun, actor: admin.email)
    }
}

extension ParticipantMoveInReport: ResponseEncodable {}
