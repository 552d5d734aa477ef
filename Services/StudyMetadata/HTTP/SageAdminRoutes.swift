import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import JSONText
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// A study's Sage assessments for its admins (docs/sage.md):
/// - `PUT /admin/v1/studies/{studyId}/draft/assessments/{identifier}` (editor): an assessment as
///   the body becomes the draft's activity `identifier` (201 new, 200 replaced); 422 lists its
///   problems as JSON pointers into it.
/// - `GET /admin/v1/studies/{studyId}/assessments/{identifier}` (viewer): the assessment as
///   imported, as Sage's clients read it.
package struct SageAdminRoutes {
    package let imports: AssessmentImports

    package init(imports: AssessmentImports) {
        self.imports = imports
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.importAssessment, use: importAssessment)
        routes.on(AdminCalls.assessment, use: assessment)
    }

    @Sendable package func importAssessment(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<AssessmentImportResult> {
        let studyId = try context.parameters.decoded("studyId")
        let identifier = try context.parameters.decoded("identifier")
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let result = try await imports.importAssessment(body.readableBytesView, identifier: identifier, studyId: studyId, by: admin)
        return EditedResponse(status: result.created ? .created : .ok, response: result)
    }

    @Sendable package func assessment(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let identifier = try context.parameters.decoded("identifier")
        guard let document = try await imports.assessment(studyId: studyId, identifier: identifier) else {
            throw StudyMetadataError.noAssessmentActivity(studyId: studyId, identifier: identifier)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: document.serialized(sortedKeys: true))))
    }
}

extension AssessmentImportResult: ResponseEncodable {}
