import AdminContracts
import Hummingbird
import ServiceKit
import ServiceKitHTTP

/// A service's study-scoped admin API: each endpoint is entered as `AdminRouter` enters any (the
/// bearer token, then the endpoint's role on the path's `{studyId}`), and the path's study is
/// then found once, by `lookup`, which answers a study it does not know with its own refusal
/// (404). The handler is handed the admin and the study, so it neither reads the path's study
/// nor looks it up.
public struct AdminStudyRouter<Authenticator: AdminAuthenticating, Study: Sendable> {
    public let routes: AdminRouter<Authenticator>
    public let lookup: @Sendable (String) async throws -> Study

    public init(_ routes: AdminRouter<Authenticator>, lookup: @escaping @Sendable (String) async throws -> Study) {
        self.routes = routes
        self.lookup = lookup
    }

    /// Mounts `endpoint`, whose access must be a role on a study. One that is not is refused to
    /// everyone (403) rather than served without the study it names.
    @discardableResult
    public func on<Body, Reply, Output: ResponseGenerator>(
        _ endpoint: AdminEndpoint<Body, Reply>,
        use handler: @escaping @Sendable (Request, ServiceRequestContext, Authenticator.Admin, Study) async throws -> Output
    ) -> Self {
        let lookup = self.lookup
        routes.on(endpoint) { request, context, admin in
            guard case .study = endpoint.access else {
                context.logger.error(
                    "an admin endpoint not scoped to a study was mounted as one", metadata: ["path": "\(endpoint.path)"])
                throw APIError.forbidden("this endpoint is not open")
            }
            let study = try await lookup(try context.parameters.decoded("studyId"))
            return try await handler(request, context, admin, study)
        }
        return self
    }
}
