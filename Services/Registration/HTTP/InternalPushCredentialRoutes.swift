import Foundation
import Hummingbird
import InternalContracts
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
        group.on(InternalCalls.pushCredentials, use: put)
        group.on(InternalCalls.pushCredentialList, use: list)
        group.on(InternalCalls.pushCredentialRemoval, use: delete)
    }

    @Sendable package func put(_ call: InternalRequest<OpaqueBody>) async throws -> PushCredentialSummary {
        let (appId, platform) = try target(call)
        let path = try InternalCalls.pushCredentials.path(["appId": appId, "platform": platform.rawValue])
        guard let body = SealedBody.open(Data(call.body.bytes), from: ServiceName.studyMetadata.rawValue, path: path, keys: keys)
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

    @Sendable package func list(_ call: InternalRequest<NoContent>) async throws -> PushCredentialList {
        PushCredentialList(credentials: try await store.summaries(appId: try call.parameter("appId")))
    }

    @Sendable package func delete(_ call: InternalRequest<NoContent>) async throws -> NoContent {
        let (appId, platform) = try target(call)
        guard try await store.delete(appId: appId, platform: platform, actor: ServiceName.studyMetadata.rawValue) else {
            throw RegistrationAdminError.noPushCredentials(appId: appId, platform: platform)
        }
        return NoContent()
    }

    private func target(_ call: InternalRequest<some InternalPayload>) throws -> (String, Platform) {
        let appId = try call.parameter("appId")
        guard let platform = Platform(rawValue: try call.parameter("platform")) else {
            throw APIError.notFound("the platform is ios or android")
        }
        return (appId, platform)
    }
}
