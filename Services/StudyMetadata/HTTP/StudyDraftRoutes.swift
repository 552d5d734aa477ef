import Foundation
import Hummingbird
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `PUT|GET /admin/v1/studies/{studyId}/draft` and `GET /admin/v1/studies`.
///
/// The draft is the whole study as one document; a PUT with any problem changes nothing and
/// answers 422 with every problem and its JSON Pointer.
package struct StudyDraftRoutes {
    package struct Saved: ResponseEncodable {
        package var studyId: String
        package var created: Bool
        /// Incomplete content that does not block saving or publishing (see `StudyValidator.review`).
        package var warnings: [ValidationProblem]
    }

    package struct StudyList: ResponseEncodable {
        package var studies: [StudyStore.Summary]
    }

    package let studies: StudyStore
    package let apps: AppStore
    package let authenticator: AdminTokenAuthenticator

    package init(studies: StudyStore, apps: AppStore, authenticator: AdminTokenAuthenticator) {
        self.studies = studies
        self.apps = apps
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.put("/admin/v1/studies/:studyId/draft", use: saveDraft)
        router.get("/admin/v1/studies/:studyId/draft", use: draft)
        router.get("/admin/v1/studies", use: list)
    }

    @Sendable package func saveDraft(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Saved> {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.authenticate(request)
        // An existing study needs an editor; anyone signed in may start a new one and becomes
        // its study admin.
        if try await studies.exists(studyId: studyId), !admin.may(.editor, on: studyId) {
            throw APIError.forbidden("this needs the editor role on study \(studyId)")
        }
        let document = try await DocumentBody.decode(StudyDocument.self, named: "study document", from: request, context: context)
        var (problems, warnings) = StudyValidator.review(document)
        if document.studyId != studyId {
            problems.insert(ValidationProblem(pointer: "/studyId", message: "must be \(studyId), the study in the path"), at: 0)
        }
        if try await apps.app(id: document.appId) == nil {
            problems.append(ValidationProblem(pointer: "/appId", message: "there is no app \(document.appId); create it first"))
        }
        guard problems.isEmpty else { throw DocumentBody.rejected(problems, in: "study document") }
        switch try await studies.saveDraft(document, by: admin) {
        case .closed:
            throw APIError.conflict("study \(studyId) is deactivated; its draft can no longer change")
        case .appFixed(let appId):
            throw DocumentBody.rejected(
                [ValidationProblem(
                    pointer: "/appId", message: "must stay \(appId): the study has been published in that app")],
                in: "study document")
        case .idTaken(let existing):
            throw APIError.conflict(
                "study id \(studyId) is taken: study \(existing) exists, and study ids are unique whatever their case")
        case .created:
            return EditedResponse(status: .created, response: Saved(studyId: studyId, created: true, warnings: warnings))
        case .updated:
            return EditedResponse(status: .ok, response: Saved(studyId: studyId, created: false, warnings: warnings))
        }
    }

    @Sendable package func draft(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        _ = try await authenticator.require(.viewer, on: studyId, request)
        guard let json = try await studies.draft(studyId: studyId) else { throw APIError.notFound("no study \(studyId)") }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: json)))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> StudyList {
        let admin = try await authenticator.authenticate(request)
        return StudyList(studies: try await studies.list(visibleTo: admin))
    }
}
