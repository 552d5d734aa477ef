import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `POST /admin/v1/apps/{appId}/move-in/studies?timeZone=&dryRun=`: what `studystack-import
/// studies` read from a MyStudies deployment becomes the app's studies (docs/moving-in.md). A dry
/// run (`dryRun=true`, the default) reports and writes nothing; `dryRun=false` imports.
package struct MoveInRoutes {
    package let moveIns: StudyMoveIns

    package init(moveIns: StudyMoveIns) {
        self.moveIns = moveIns
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.moveInStudies, use: moveIn)
    }

    @Sendable package func moveIn(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StudyMoveInReport {
        let appId = try context.parameters.decoded("appId")
        let query = request.uri.queryParameters
        guard let timeZone = query.get("timeZone"), !timeZone.isEmpty else {
            throw APIError.badRequest("timeZone is required: the IANA zone the source's schedules were written in", field: "timeZone")
        }
        let dryRun = try request.dryRun()
        let export = try await DocumentBody.decode(
            MyStudiesStudyExport.self, named: "export", from: request, context: context, maxValues: Self.maxExportValues)
        return try await moveIns.run(export, appId: appId, timeZone: timeZone, dryRun: dryRun, by: admin)
    }

    /// The most values the replies of one export build together (docs/security.md, Budgets): a
    /// study of a hundred activities at ten versions of fifty steps each, with room.
    package static let maxExportValues = 1_048_576
}

extension StudyMoveInReport: ResponseEncodable {}
