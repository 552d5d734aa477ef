import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP

/// The LabKey-style app API: one route per path segment, dispatched on the action name through
/// one table. An action the table does not name answers 404; none can fall through to another.
package struct MobileAppRoutes: Sendable {
    /// One action of the app API.
    package struct Action: Sendable {
        /// As the apps spell it (matched in any case).
        package let name: String
        /// Actions that change something or spend a secret answer only POST, as the original's
        /// mutating actions did; the queries also answer GET.
        package let postOnly: Bool
        package let handle: @Sendable (MobileAppRoutes, LabKeyCall) async throws -> Response
    }

    /// Every action served; the OpenAPI coverage test reads this same table.
    package static let actions: [Action] = [
        Action(name: "enroll", postOnly: true) { try await $0.enrollment.enroll($1) },
        Action(name: "validateEnrollmentToken", postOnly: true) { try await $0.enrollment.validate($1) },
        Action(name: "resolveEnrollmentToken", postOnly: true) { try await $0.enrollment.resolve($1) },
        Action(name: "processResponse", postOnly: true) { try await $0.responses.processResponse($1) },
        Action(name: "withdrawFromStudy", postOnly: true) { try await $0.responses.withdraw($1) },
        Action(name: "selectRows", postOnly: false) { try await $0.queries.selectRows($1) },
        Action(name: "executeSQL", postOnly: false) { try await $0.queries.executeSQL($1) },
    ]

    /// `actions` by lower-cased name (`LabKeyCall.action(in:)` lower-cases the path's).
    static let byName: [String: Action] = Dictionary(uniqueKeysWithValues: actions.map { ($0.name.lowercased(), $0) })

    package let enrollment: EnrollmentRoutes
    package let responses: ResponseRoutes
    package let queries: QueryRoutes

    package init(enrollment: EnrollmentRoutes, responses: ResponseRoutes, queries: QueryRoutes) {
        self.enrollment = enrollment
        self.responses = responses
        self.queries = queries
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post(":call", use: handle)
        router.get(":call", use: handle)
    }

    @Sendable package func handle(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        guard let name = LabKeyCall.action(in: try context.parameters.decoded("call")) else {
            throw APIError.notFound("no such path")
        }
        guard let action = Self.byName[name] else {
            throw APIError(.notFound, code: "not_found", message: "Unknown action: \(name)")
        }
        if action.postOnly && request.method != .post { throw LabKeyCall.postRequired }
        let call = try await LabKeyCall.read(
            request, context: context, action: name, addresses: enrollment.throttle.rateLimiter.addresses)
        return try await action.handle(self, call)
    }
}
