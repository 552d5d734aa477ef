import Foundation
import Hummingbird
import NIOCore
import ServiceKit
import StudyModels

/// `POST /admin/v1/studies/{studyId}/{action}` (publish, unpublish, launch, publish-updates,
/// pause, resume, deactivate) and the versions they freeze.
struct StudyLifecycleRoutes {
    struct ActionResult: ResponseEncodable {
        var studyId: String
        var status: StudyStatus
        /// The version this action froze, when it froze one.
        var version: StudyVersionStore.VersionRecord?
    }

    struct VersionList: ResponseEncodable {
        var versions: [StudyVersionStore.VersionRecord]
    }

    let versions: StudyVersionStore
    let authenticator: AdminAuthenticator

    func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/studies/:studyId/:action", use: perform)
        router.get("/admin/v1/studies/:studyId/versions", use: list)
        router.get("/admin/v1/studies/:studyId/versions/:version", use: document)
    }

    @Sendable func perform(_ request: Request, context: ServiceRequestContext) async throws -> ActionResult {
        let studyId = try context.parameters.require("studyId")
        let actionName = try context.parameters.require("action")
        guard let action = LifecycleAction(rawValue: actionName) else {
            throw APIError.notFound(
                "no action \(actionName); one of \(LifecycleAction.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        switch try await versions.apply(action, studyId: studyId, by: admin.email, mayAnnounceToApp: admin.role == .superAdmin) {
        case .done(let status, let frozen):
            return ActionResult(studyId: studyId, status: status, version: frozen)
        case .notFound:
            throw APIError.notFound("no study \(studyId)")
        case .notAllowed(let current):
            throw APIError.conflict("a study that is \(current.rawValue) cannot be given the action \(action.rawValue)")
        case .invalid(let problems):
            throw DocumentBody.rejected(problems, in: "draft")
        case .nothingToPublish:
            throw APIError.conflict("the draft has not changed since the last published version")
        }
    }

    @Sendable func list(_ request: Request, context: ServiceRequestContext) async throws -> VersionList {
        let studyId = try context.parameters.require("studyId")
        _ = try await authenticator.require(.viewer, on: studyId, request)
        return VersionList(versions: try await versions.versions(studyId: studyId))
    }

    @Sendable func document(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        let version = try context.parameters.require("version", as: Int.self)
        _ = try await authenticator.require(.viewer, on: studyId, request)
        guard let json = try await versions.document(studyId: studyId, version: version) else {
            throw APIError.notFound("study \(studyId) has no version \(version)")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}
