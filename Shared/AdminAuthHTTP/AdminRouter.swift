import AdminContracts
import Hummingbird
import Logging
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// How a service learns who an admin bearer token belongs to: study-metadata reads its own
/// sessions, the other services ask study-metadata (`RemoteAdminAuthenticator`).
public protocol AdminAuthenticating: Sendable {
    associatedtype Admin: AdminRoleHolder
    /// The admin, or 401 (no token, or one unknown, expired or revoked).
    func authenticate(_ request: Request, logger: Logger) async throws -> Admin
}

/// A service's admin API, mounted from the definitions (`AdminCalls`): every route authenticates
/// the bearer token and checks the endpoint's access before its handler runs, so a handler gets
/// the admin it may serve and names no role of its own.
public struct AdminRouter<Authenticator: AdminAuthenticating> {
    public let router: Router<ServiceRequestContext>
    public let authenticator: Authenticator

    public init(_ router: Router<ServiceRequestContext>, authenticator: Authenticator) {
        self.router = router
        self.authenticator = authenticator
    }

    /// Mounts `endpoint` for signed-in admins holding its access (401 without a valid token,
    /// 403 without the access).
    @discardableResult
    public func on<Body, Reply, Output: ResponseGenerator>(
        _ endpoint: AdminEndpoint<Body, Reply>,
        use handler: @escaping @Sendable (Request, ServiceRequestContext, Authenticator.Admin) async throws -> Output
    ) -> Self {
        let authenticator = self.authenticator
        router.on(RouterPath(endpoint.path.routePattern()), method: Self.method(endpoint)) { request, context in
            let admin = try await authenticator.authenticate(request, logger: context.logger)
            try Self.admit(admin, to: endpoint, context)
            return try await handler(request, context, admin)
        }
        return self
    }

    /// Mounts an endpoint anyone may call (signing in, accepting an invitation). An endpoint
    /// that needs more is refused to everyone (403) rather than served without its check.
    @discardableResult
    public func onPublic<Body, Reply, Output: ResponseGenerator>(
        _ endpoint: AdminEndpoint<Body, Reply>, use handler: @escaping @Sendable (Request, ServiceRequestContext) async throws -> Output
    ) -> Self {
        router.on(RouterPath(endpoint.path.routePattern()), method: Self.method(endpoint)) { request, context in
            guard endpoint.access == .anyone else {
                context.logger.error(
                    "an admin endpoint that needs a signed-in admin was mounted as public", metadata: ["path": "\(endpoint.path)"])
                throw APIError.forbidden("this endpoint is not open")
            }
            return try await handler(request, context)
        }
        return self
    }

    static func method(_ endpoint: some AdminEndpointDescription) -> HTTPRequest.Method {
        HTTPRequest.Method(endpoint.method.rawValue) ?? .get
    }

    /// Whether `admin` holds the endpoint's access; the study is the path's `{studyId}`.
    public static func admit(
        _ admin: some AdminRoleHolder, to endpoint: some AdminEndpointDescription, _ context: ServiceRequestContext
    ) throws {
        switch endpoint.access {
        case .anyone, .signedIn:
            return
        case .superAdmin:
            guard admin.role == .superAdmin else { throw APIError.forbidden(endpoint.forbidden ?? "only a super-admin may do this") }
        case .study(let role):
            let studyId = try context.parameters.decoded("studyId")
            guard admin.may(role, on: studyId) else {
                throw APIError.forbidden(endpoint.forbidden ?? "this needs the \(role.rawValue) role on study \(studyId)")
            }
        }
    }
}
