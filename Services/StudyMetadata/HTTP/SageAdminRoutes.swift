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
    package let authenticator: AdminTokenAuthenticator

    package init(imports: AssessmentImports, authenticator: AdminTokenAuthenticator) {
        self.imports = imports
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.put("/admin/v1/studies/:studyId/draft/assessments/:identifier", use: importAssessment)
        router.get("/admin/v1/studies/:studyId/assessments/:identifier", use: assessment)
    }

    @Sendable package func importAssessment(
        _ request: Request, context: ServiceRequestContext
    ) async throws -> EditedResponse<AssessmentImportResult> {
        let studyId = try context.parameters.decoded("studyId")
        let identifier = try context.parameters.decoded("identifier")
        let admin = try await authenticator.require(.editor, on: studyId, request)
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let result = try await imports.importAssessment(body.readableBytesView, identifier: identifier, studyId: studyId, by: admin)
        return EditedResponse(status: result.created ? .created : .ok, response: result)
    }

    @Sendable package func assessment(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let identifier = try context.parameters.decoded("identifier")
        _ = try await authenticator.require(.viewer, on: studyId, request)
        guard let document = try await imports.assessment(studyId: studyId, identifier: identifier) else {
            throw StudyMetadataError.noAssessmentActivity(studyId: studyId, identifier: identifier)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: document.serialized(sortedKeys: true))))
    }
}

extension AssessmentImportResult: ResponseEncodable {}
