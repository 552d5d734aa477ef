import AdminAuthHTTP
import AdminContracts
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
    package let editing: DraftEditing
    /// The studies list and summaries.
    package let studies: StudyStore

    package init(editing: DraftEditing, studies: StudyStore) {
        self.editing = editing
        self.studies = studies
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.saveDraft, use: saveDraft)
        routes.on(AdminCalls.draft, use: draft)
        routes.on(AdminCalls.studies, use: list)
        routes.on(AdminCalls.study, use: summary)
    }

    @Sendable package func saveDraft(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<DraftSaved> {
        let studyId = try context.parameters.decoded("studyId")
        let access = try await editing.authorize(admin, studyId: studyId)
        let expecting = try Self.precondition(request)
        let document = try await DocumentBody.decode(StudyDocument.self, named: "study document", from: request, context: context)
        let saved = try await editing.save(document, with: access, expecting: expecting)
        return EditedResponse(status: saved.created ? .created : .ok, response: saved)
    }

    @Sendable package func draft(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        guard let draft = try await studies.draft(studyId: studyId) else { throw StudyMetadataError.unknownStudy(studyId) }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .eTag: "\"\(draft.revision)\""],
            body: .init(byteBuffer: ByteBuffer(string: draft.json)))
    }

    @Sendable package func summary(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StudySummary {
        let studyId = try context.parameters.decoded("studyId")
        guard var summary = try await studies.summary(studyId: studyId) else { throw StudyMetadataError.unknownStudy(studyId) }
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

    @Sendable package func list(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> StudyList {
        var list = try await studies.list(visibleTo: admin)
        for index in list.indices { list[index].role = admin.role(on: list[index].studyId) }
        return StudyList(studies: list)
    }
}
