import Foundation
import Hummingbird
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `POST /admin/v1/studies/{studyId}/{action}` (publish, unpublish, launch, publish-updates,
/// pause, resume, deactivate), the versions they freeze, and the storage check they make.
package struct StudyLifecycleRoutes {
    package let actions: StudyLifecycleActions
    package let authenticator: AdminTokenAuthenticator

    package init(actions: StudyLifecycleActions, authenticator: AdminTokenAuthenticator) {
        self.actions = actions
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/studies/:studyId/:action", use: perform)
        router.get("/admin/v1/studies/:studyId/versions", use: list)
        router.get("/admin/v1/studies/:studyId/versions/:version", use: document)
        router.get("/admin/v1/studies/:studyId/storage-check", use: storageCheck)
    }

    /// Whether the draft's answers could be stored if it were published now (the check publishing
    /// makes): for the editors preparing it, as it asks the response service to rehearse.
    @Sendable package func storageCheck(_ request: Request, context: ServiceRequestContext) async throws -> StorageCheckReply {
        let studyId = try context.parameters.decoded("studyId")
        _ = try await authenticator.require(.editor, on: studyId, request)
        return StorageCheckReply(problems: try await actions.storageProblems(studyId: studyId))
    }

    @Sendable package func perform(_ request: Request, context: ServiceRequestContext) async throws -> StudyActionResult {
        let studyId = try context.parameters.decoded("studyId")
        let admin = try await authenticator.require(.studyAdmin, on: studyId, request)
        let actionName = try context.parameters.decoded("action")
        guard let action = LifecycleAction(rawValue: actionName) else {
            throw APIError.notFound(
                "no action \(actionName); one of \(LifecycleAction.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let (status, frozen) = try await actions.apply(
            action, studyId: studyId, by: admin.email, mayAnnounceToApp: admin.role == .superAdmin)
        return StudyActionResult(studyId: studyId, status: status, version: frozen)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> StudyVersionList {
        let studyId = try context.parameters.decoded("studyId")
        _ = try await authenticator.require(.viewer, on: studyId, request)
        return StudyVersionList(versions: try await actions.versions.versions(studyId: studyId))
    }

    @Sendable package func document(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        _ = try await authenticator.require(.viewer, on: studyId, request)
        let version = try context.parameters.require("version", as: Int.self)
        guard let json = try await actions.versions.document(studyId: studyId, version: version) else {
            throw StudyMetadataError.noVersion(studyId: studyId, version: version)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}
