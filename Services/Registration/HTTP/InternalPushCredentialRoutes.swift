import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `/internal/v1/apps/{appId}/push-credentials[/{platform}]`: study-metadata relays an admin's
/// push credentials here (signed, the body sealed with `SealedBody`; only study-metadata may
/// call). They are checked, sealed at rest, and never returned: replies carry summaries only.
package struct InternalPushCredentialRoutes {
    package let store: PushCredentialStore
    package let keys: InternalKeys

    package init(store: PushCredentialStore, keys: InternalKeys) {
        self.store = store
        self.keys = keys
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.put("/v1/apps/:appId/push-credentials/:platform", use: put)
        group.get("/v1/apps/:appId/push-credentials", use: list)
        group.delete("/v1/apps/:appId/push-credentials/:platform", use: delete)
    }

    @Sendable package func put(_ request: Request, context: ServiceRequestContext) async throws -> PushCredentialSummary {
        let (appId, platform) = try target(context)
        let sealed = try await request.body.collect(upTo: 64 * 1024)
        let path = InternalPaths.pushCredentials(appId: appId, platform: platform)
        guard let body = SealedBody.open(Data(buffer: sealed), from: ServiceName.studyMetadata.rawValue, path: path, keys: keys)
        else {
            throw APIError.badRequest("the body is not sealed for \(path)")
        }
        let credentials: PushCredentials
        do {
            credentials = try PushCredentials.parse(body, for: platform)
        } catch {
            throw APIError.invalid(
                "the \(platform.rawValue) push credentials cannot be used",
                problems: error.problems.map { AdminErrorBody.Problem(pointer: $0.pointer, message: $0.message) })
        }
        return try await store.save(credentials, appId: appId, actor: ServiceName.studyMetadata.rawValue)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> PushCredentialList {
        try context.requireCaller(.studyMetadata, "manages push credentials")
        return PushCredentialList(credentials: try await store.summaries(appId: try context.parameters.decoded("appId")))
    }

    @Sendable package func delete(_ request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let (appId, platform) = try target(context)
        guard try await store.delete(appId: appId, platform: platform, actor: ServiceName.studyMetadata.rawValue) else {
            throw RegistrationAdminError.noPushCredentials(appId: appId, platform: platform)
        }
        return .noContent
    }

    private func target(_ context: ServiceRequestContext) throws -> (String, Platform) {
        try context.requireCaller(.studyMetadata, "manages push credentials")
        let appId = try context.parameters.decoded("appId")
        guard let platform = Platform(rawValue: try context.parameters.decoded("platform")) else {
            throw APIError.notFound("the platform is ios or android")
        }
        return (appId, platform)
    }
}

extension PushCredentialSummary: ResponseEncodable {}
extension PushCredentialList: ResponseEncodable {}
