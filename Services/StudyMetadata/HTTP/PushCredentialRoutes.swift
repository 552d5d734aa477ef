import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import InternalContracts
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
    package let audit: AuditLog

    package init(
        apps: AppStore, internalClient: InternalClient, audit: AuditLog
    ) {
        self.apps = apps
        self.internalClient = internalClient
        self.audit = audit
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.uploadPush, use: put)
        routes.on(AdminCalls.pushCredentials, use: list)
        routes.on(AdminCalls.removePush, use: delete)
    }

    @Sendable package func put(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> PushCredentialSummary {
        let (appId, platform) = try await target(context)
        let upload = try await request.body.collect(upTo: Self.maxUploadBytes)
        let parameters = ["appId": appId, "platform": platform.rawValue]
        let path = try InternalCalls.pushCredentials.path(parameters)
        let sealed = try SealedBody.seal(Data(buffer: upload), to: .registration, path: path, keys: internalClient.keys)
        switch try await relay(InternalCalls.pushCredentials, parameters, body: OpaqueBody(sealed), context) {
        case .answered(let summary):
            try await audit.record(
                actor: admin.email, action: "app.push_credentials_set",
                details: ["appId": appId, "platform": platform.rawValue, "publicKeySHA256": summary.publicKeySHA256])
            return summary
        case .refused(let refusal, let body) where refusal.status == 422:
            let refused = try? InternalCoding.decoder.decode(AdminErrorBody.self, from: Data(buffer: body))
            throw APIError.invalid(
                refused?.error.message ?? "the push credentials cannot be used", problems: refused?.error.problems ?? [])
        case .refused(let refusal, _):
            throw Self.peerFailed("answered \(refusal.status)")
        }
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> PushCredentialList {
        let appId = try context.parameters.decoded("appId")
        guard try await apps.app(id: appId) != nil else { throw StudyMetadataError.noApp(appId) }
        switch try await relay(InternalCalls.pushCredentialList, ["appId": appId], body: NoContent(), context) {
        case .answered(let list): return list
        case .refused(let refusal, _): throw Self.peerFailed("answered \(refusal.status)")
        }
    }

    @Sendable package func delete(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> HTTPResponse.Status {
        let (appId, platform) = try await target(context)
        let parameters = ["appId": appId, "platform": platform.rawValue]
        switch try await relay(InternalCalls.pushCredentialRemoval, parameters, body: NoContent(), context) {
        case .answered:
            try await audit.record(
                actor: admin.email, action: "app.push_credentials_removed",
                details: ["appId": appId, "platform": platform.rawValue])
            return .noContent
        case .refused:
            throw StudyMetadataError.noPushCredentials(appId: appId, platform: platform)
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

    /// One call to registration; unreachable, or an answer the endpoint does not define, is a
    /// 502 that says nothing was changed.
    private func relay<Body, Reply>(
        _ endpoint: InternalEndpoint<Body, Reply>, _ parameters: [String: String], body: Body, _ context: ServiceRequestContext
    ) async throws -> InternalAnswer<Reply> {
        do {
            return try await internalClient.call(endpoint, parameters, body: body, logger: context.logger)
        } catch {
            context.logger.warning("registration could not take a push credentials call", metadata: ["error": "\(error)"])
            throw Self.peerFailed((error as? InternalCallError)?.status.map { "answered \($0)" } ?? "could not be reached")
        }
    }

    package static func peerFailed(_ what: String) -> APIError {
        APIError(
            .badGateway, code: "peer_failed",
            message: "the registration service \(what); nothing was changed, try again")
    }
}

extension PushCredentialSummary: ResponseEncodable {}
extension PushCredentialList: ResponseEncodable {}
