import NIOHTTP1
import ServiceKit
import StudyModels

/// Who may call an admin endpoint. The route mounted from the definition (`AdminRouter.on`)
/// authenticates the bearer token and checks this before the handler runs, so a handler cannot
/// forget either, and the role an endpoint needs is written once, here.
public enum AdminAccess: Sendable, Equatable {
    /// No token: signing in, accepting an invitation.
    case anyone
    /// Any signed-in admin; what they see is limited by their roles (the studies list, API keys).
    case signedIn
    /// Super-admins only (accounts, apps, the outbox).
    case superAdmin
    /// Admins holding at least this role on the study named by the path's `{studyId}`.
    case study(StudyRole)
}

/// What the documentation and the coverage tests read of an admin endpoint, whatever its types.
public protocol AdminEndpointDescription: Sendable {
    var method: HTTPMethod { get }
    var path: PathTemplate { get }
    var service: ServiceName { get }
    var access: AdminAccess { get }
    var forbidden: String? { get }
}

/// One admin API endpoint, defined once: the console builds its request and reads its reply
/// from this, the service mounts its route from it (`AdminRouter.on`), and the OpenAPI coverage
/// test reads it. `Body` and `Reply` are what travels: a `Codable` type as JSON in the one form
/// the admin and internal APIs share (`InternalCoding`), `NoContent`, or bytes passed as they are
/// (`JSONBytes` for a document read within its own budget, `OpaqueBody` for files and CSV).
public struct AdminEndpoint<Body: InternalPayload, Reply: InternalPayload>: AdminEndpointDescription {
    public let method: HTTPMethod
    public let path: PathTemplate
    public let service: ServiceName
    public let access: AdminAccess
    /// The 403's words when the caller lacks the access, where they say more than the role.
    public let forbidden: String?

    public init(_ method: HTTPMethod, _ template: String, on service: ServiceName, access: AdminAccess, forbidden: String? = nil) {
        self.method = method
        path = PathTemplate(template)
        self.service = service
        self.access = access
        self.forbidden = forbidden
    }
}

/// Where every admin endpoint lives.
public enum AdminAPI {
    /// The router group every admin route is mounted under.
    public static let prefix = "/admin/v1"
}
