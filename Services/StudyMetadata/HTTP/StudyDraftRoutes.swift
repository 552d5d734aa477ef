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
        router.get("/admin/v1/studies/:studyId", use: summary)
    }

    @Sendable package func saveDraft(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<DraftSaved> {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.authenticate(request)
        // An existing study needs an editor; anyone signed in may start a new one and becomes
        // its study admin.
        if try await studies.exists(studyId: studyId), !admin.may(.editor, on: studyId) {
            throw APIError.forbidden("this needs the editor role on study \(studyId)")
        }
        let document = try await DocumentBody.decode(StudyDocument.self, named: "study document", from: request, context: context)
        let review = StudyValidator.review(document)
        // What is unfinished saves with a warning; publishing refuses it (PublishGuard).
        var (problems, warnings) = (review.problems, review.warnings + review.unfinished)
        if document.studyId != studyId {
            problems.insert(ValidationProblem(pointer: "/studyId", message: "must be \(studyId), the study in the path"), at: 0)
        }
        if try await apps.app(id: document.appId) == nil {
            problems.append(ValidationProblem(pointer: "/appId", message: "there is no app \(document.appId); create it first"))
        }
        guard problems.isEmpty else { throw DocumentBody.rejected(problems, in: "study document") }
        let expecting = try Self.precondition(request)
        switch try await studies.saveDraft(document, by: admin, expecting: expecting) {
        case .preconditionFailed(let current):
            throw APIError(
                .preconditionFailed, code: expecting == .absent ? "study_exists" : "draft_changed",
                message: expecting == .absent
                    ? "study \(studyId) exists already (If-None-Match: * creates only)"
                    : current == 0
                    ? "study \(studyId) does not exist, so no revision of its draft can match If-Match"
                    : "the draft changed since it was read (it is at revision \(current) now); read it again and redo the change")
        case .closed:
            throw APIError.conflict("study \(studyId) is deactivated; its draft can no longer change")
        case .appFixed(let appId):
            throw DocumentBody.rejected(
                [ValidationProblem(
                    pointer: "/appId", message: "must stay \(appId): the study has been published in that app")],
                in: "study document")
        case .eligibilityFixed(let type):
            throw DocumentBody.rejected(
                [ValidationProblem(
                    pointer: "/eligibility/type",
                    message: "must stay \(type): the study has launched, and participants joined by it")],
                in: "study document")
        case .idTaken(let existing):
            throw APIError.conflict(
                "study id \(studyId) is taken: study \(existing) exists, and study ids are unique whatever their case")
        case .created:
            return EditedResponse(status: .created, response: DraftSaved(studyId: studyId, created: true, warnings: warnings))
        case .updated:
            return EditedResponse(status: .ok, response: DraftSaved(studyId: studyId, created: false, warnings: warnings))
        }
    }

    @Sendable package func draft(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        _ = try await authenticator.require(.viewer, on: studyId, request)
        guard let draft = try await studies.draft(studyId: studyId) else { throw APIError.notFound("no study \(studyId)") }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .eTag: "\"\(draft.revision)\""],
            body: .init(byteBuffer: ByteBuffer(string: draft.json)))
    }

    @Sendable package func summary(_ request: Request, context: ServiceRequestContext) async throws -> StudySummary {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.require(.viewer, on: studyId, request)
        guard var summary = try await studies.summary(studyId: studyId) else { throw APIError.notFound("no study \(studyId)") }
        summary.role = admin.role(on: summary.studyId)
        return summary
    }

    /// What the save expects: the revision an `If-Match` names (`"7"`, as `GET .../draft` sent it
    /// in `ETag`), a new study for `If-None-Match: *`, or nothing in particular.
    static func precondition(_ request: Request) throws -> StudyStore.DraftPrecondition {
        if let noneMatch = request.headers[.ifNoneMatch]?.trimmingCharacters(in: .whitespaces) {
            guard noneMatch == "*" else { throw APIError.badRequest("If-None-Match may only be * (create only)", field: "If-None-Match") }
            return .absent
        }
        guard let value = request.headers[.ifMatch]?.trimmingCharacters(in: .whitespaces) else { return .none }
        var tag = Substring(value)
        if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
        guard tag.count >= 3, tag.first == "\"", tag.last == "\"", let revision = Int(tag.dropFirst().dropLast()), revision > 0 else {
            throw APIError.badRequest("If-Match must be the ETag that GET .../draft sent, such as \"3\"", field: "If-Match")
        }
        return .revision(revision)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> StudyList {
        let admin = try await authenticator.authenticate(request)
        var list = try await studies.list(visibleTo: admin)
        for index in list.indices { list[index].role = admin.role(on: list[index].studyId) }
        return StudyList(studies: list)
    }
}
