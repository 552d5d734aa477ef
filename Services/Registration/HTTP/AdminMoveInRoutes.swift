import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import JSONText
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
        let dryRun: Bool
        switch request.uri.queryParameters.get("dryRun") {
        case nil, "true": dryRun = true
        case "false": dryRun = false
        default: throw APIError.badRequest("dryRun is true or false", field: "dryRun")
        }
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        let export: MyStudiesParticipantExport
        do {
            export = try JSONDecoder().decode(MyStudiesParticipantExport.self, from: Data(buffer: buffer))
        } catch let error as DecodingError {
            let problem = JSONPointer.problem(for: error, document: "export")
            throw APIError.invalid("the export could not be read", problems: [.init(pointer: problem.pointer, message: problem.message)])
        }
        return try await moveIns.run(export, appId: appId, dryRun: dryRun, actor: admin.email)
    }
}

extension ParticipantMoveInReport: ResponseEncodable {}
