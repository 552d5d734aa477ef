import AdminAuthHTTP
import AdminContracts
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
    /// The versions the actions froze, as they are read back.
    package let versions: StudyVersionStore

    package init(actions: StudyLifecycleActions, versions: StudyVersionStore) {
        self.actions = actions
        self.versions = versions
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.lifecycleAction, use: perform)
        routes.on(AdminCalls.versions, use: list)
        routes.on(AdminCalls.version, use: document)
        routes.on(AdminCalls.storageCheck, use: storageCheck)
    }

    /// Whether the draft's answers could be stored if it were published now (the check publishing
    /// makes): for the editors preparing it, as it asks the response service to rehearse.
    @Sendable package func storageCheck(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StorageCheckReply {
        let studyId = try context.parameters.decoded("studyId")
        return StorageCheckReply(problems: try await actions.storageProblems(studyId: studyId))
    }

    @Sendable package func perform(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StudyActionResult {
        let studyId = try context.parameters.decoded("studyId")
        let actionName = try context.parameters.decoded("action")
        guard let action = LifecycleAction(rawValue: actionName) else {
            throw APIError.notFound(
                "no action \(actionName); one of \(LifecycleAction.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let (status, frozen) = try await actions.apply(
            action, studyId: studyId, by: admin.email, mayAnnounceToApp: admin.role == .superAdmin,
            reconsent: try request.flag("reconsent"))
        return StudyActionResult(studyId: studyId, status: status, version: frozen)
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StudyVersionList {
        let studyId = try context.parameters.decoded("studyId")
        return StudyVersionList(versions: try await versions.versions(studyId: studyId))
    }

    @Sendable package func document(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let version = try context.parameters.require("version", as: Int.self)
        guard let json = try await versions.document(studyId: studyId, version: version) else {
            throw StudyMetadataError.noVersion(studyId: studyId, version: version)
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: json)))
    }
}
