import Foundation
import Hummingbird
import NIOHTTP1
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `PUT|DELETE /admin/v1/apps/{appId}/push/{ios|android}`, `GET /admin/v1/apps/{appId}/push`.
///
/// Push credentials are used by the registration service, so they are kept only there: this
/// service checks the admin, seals the upload (`SealedBody`) and relays it over a signed call in
/// the same request, so the admin learns at once whether it was accepted, and nothing secret is
/// stored or queued here. Replies carry summaries (ids and a public-key fingerprint), never keys.
package struct PushCredentialRoutes {
    package static let maxUploadBytes = 64 * 1024

    package let apps: AppStore
    package let internalClient: InternalClient
    package let authenticator: AdminTokenAuthenticator
    package let audit: AuditLog

    package init(
        apps: AppStore, internalClient: InternalClient, authenticator: AdminTokenAuthenticator, audit: AuditLog
    ) {
        self.apps = apps
        self.internalClient = internalClient
        self.authenticator = authenticator
        self.audit = audit
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.put("/admin/v1/apps/:appId/push/:platform", use: put)
        router.get("/admin/v1/apps/:appId/push", use: list)
        router.delete("/admin/v1/apps/:appId/push/:platform", use: delete)
    }

    @Sendable package func put(_ request: Request, context: ServiceRequestContext) async throws -> PushCredentialSummary {
        let admin = try await authenticator.requireSuperAdmin(request)
        let (appId, platform) = try await target(context)
        let upload = try await request.body.collect(upTo: Self.maxUploadBytes)
        let path = InternalPaths.pushCredentials(appId: appId, platform: platform)
        let sealed = try SealedBody.seal(Data(buffer: upload), to: .registration, path: path, keys: internalClient.keys)
        let response = try await relay(.PUT, path: path, body: sealed, contentType: "application/octet-stream", context)
        switch response.status.code {
        case 200:
            let summary = try Self.decoder.decode(PushCredentialSummary.self, from: Data(buffer: response.body))
            try await audit.record(
                actor: admin.email, action: "app.push_credentials_set",
                details: ["appId": appId, "platform": platform.rawValue, "publicKeySHA256": summary.publicKeySHA256])
            return summary
        case 422:
            let refused = try? JSONDecoder().decode(AdminErrorBody.self, from: Data(buffer: response.body))
            throw APIError.invalid(
                refused?.error.message ?? "the push credentials cannot be used", problems: refused?.error.problems ?? [])
        default:
            throw Self.peerFailed("answered \(response.status.code)")
        }
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> PushCredentialList {
        _ = try await authenticator.authenticate(request)
        let appId = try context.parameters.decoded("appId")
        guard try await apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        let response = try await relay(.GET, path: InternalPaths.pushCredentialList(appId: appId), context)
        guard response.status.code == 200 else { throw Self.peerFailed("answered \(response.status.code)") }
        return try Self.decoder.decode(PushCredentialList.self, from: Data(buffer: response.body))
    }

    @Sendable package func delete(_ request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let admin = try await authenticator.requireSuperAdmin(request)
        let (appId, platform) = try await target(context)
        let response = try await relay(.DELETE, path: InternalPaths.pushCredentials(appId: appId, platform: platform), context)
        switch response.status.code {
        case 204:
            try await audit.record(
                actor: admin.email, action: "app.push_credentials_removed",
                details: ["appId": appId, "platform": platform.rawValue])
            return .noContent
        case 404: throw StudyMetadataError.noPushCredentials(appId: appId, platform: platform)
        default: throw Self.peerFailed("answered \(response.status.code)")
        }
    }

    private func target(_ context: ServiceRequestContext) async throws -> (String, Platform) {
        let appId = try context.parameters.decoded("appId")
        guard let platform = Platform(rawValue: try context.parameters.decoded("platform")) else {
            throw APIError.notFound("the platform is ios or android")
        }
        guard try await apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        return (appId, platform)
    }

    private func relay(
        _ method: HTTPMethod, path: String, body: [UInt8] = [], contentType: String? = nil,
        _ context: ServiceRequestContext
    ) async throws -> InternalClient.Reply {
        do {
            return try await internalClient.send(
                method, to: .registration, path: path, body: body, contentType: contentType, logger: context.logger)
        } catch {
            context.logger.warning("registration unreachable", metadata: ["error": "\(error)"])
            throw Self.peerFailed("could not be reached")
        }
    }

    package static func peerFailed(_ what: String) -> APIError {
        APIError(
            .badGateway, code: "peer_failed",
            message: "the registration service \(what); nothing was changed, try again")
    }

    package static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

extension PushCredentialSummary: ResponseEncodable {}
extension PushCredentialList: ResponseEncodable {}
