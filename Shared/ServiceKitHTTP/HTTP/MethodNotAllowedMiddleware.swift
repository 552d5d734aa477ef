import Hummingbird
import ServiceKit
import Synchronization

/// Answers 405 Method Not Allowed, with an `Allow` header, to a request whose path a route
/// serves under other methods only (`TRACE /healthz`, `DELETE /mobileappstudy-enroll.api`).
/// Hummingbird's router answers those 404, which tells a client the resource does not exist.
///
/// The routes are consulted only when the answer is a 404, so other requests pay nothing. A route
/// that answers 404 itself (an unknown study) serves the request's method, so it stays a 404.
public struct MethodNotAllowedMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext

    /// The mounted routes, recorded once they are all added (after the middleware is).
    public final class RouteTable: Sendable {
        private let routes = Mutex<[(method: String, segments: [Substring])]>([])

        public init() {}

        public func record(_ mounted: [(method: String, path: String)]) {
            routes.withLock {
                $0 = mounted.map { (method: $0.method, segments: $0.path.split(separator: "/")) }
            }
        }

        /// The methods of the most specific routes that match `path` (those with the most literal
        /// segments), in the order they were mounted. The most specific route owns its path: the
        /// LabKey API's `/:call/:folder` matches every two-segment path, but `GET /v3/uploads`
        /// is a method `POST /v3/uploads` does not take, not a LabKey call that was not found.
        package func methods(matching path: String) -> [String] {
            let segments = path.split(separator: "/")
            var methods: [String] = []
            var best = -1
            for route in routes.withLock({ $0 }) where Self.matches(route.segments, segments) {
                let literals = route.segments.filter { !($0.hasPrefix(":") || $0.hasPrefix("{") || $0.hasPrefix("*")) }.count
                if literals > best {
                    best = literals
                    methods = []
                }
                if literals == best, !methods.contains(route.method) { methods.append(route.method) }
            }
            return methods
        }

        /// Hummingbird's patterns: `:name` and `*` take one segment, `**` the rest.
        static func matches(_ pattern: [Substring], _ path: [Substring]) -> Bool {
            var index = 0
            for part in pattern {
                if part == "**" { return true }
                guard index < path.count else { return false }
                if !(part.hasPrefix(":") || part == "*" || part.hasPrefix("{")) && part != path[index] { return false }
                index += 1
            }
            return index == path.count
        }
    }

    let table: RouteTable

    public init(table: RouteTable) {
        self.table = table
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError where error.status == .notFound {
            let allowed = table.methods(matching: request.uri.path)
            if !allowed.isEmpty, !allowed.contains(request.method.rawValue) {
                throw HTTPError(.methodNotAllowed, headers: [.allow: allowed.joined(separator: ", ")])
            }
            throw error
        }
    }
}
