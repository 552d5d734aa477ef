import AdminAuthHTTP
import AdminContracts
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `GET|PUT /admin/v1/studies/{studyId}/checklist`: the manual check-list before launch, read by
/// the team and ticked by its editors (the router checks the role).
package struct StudyChecklistRoutes {
    package let checklists: StudyChecklists

    package init(checklists: StudyChecklists) {
        self.checklists = checklists
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.checklist, use: state)
        routes.on(AdminCalls.tickChecklist, use: tick)
    }

    @Sendable package func state(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StudyChecklistState {
        try await checklists.state(studyId: try context.parameters.decoded("studyId"))
    }

    @Sendable package func tick(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<StudyChecklistState> {
        let studyId = try context.parameters.decoded("studyId")
        let body = try await DocumentBody.decode(StudyChecklistTicks.self, named: "check-list", from: request, context: context)
        return EditedResponse(status: .ok, response: try await checklists.tick(body, studyId: studyId, by: admin.email))
    }
}
