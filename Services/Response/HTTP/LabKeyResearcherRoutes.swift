import AdminAuthHTTP
import Crypto
import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The LabKey API researchers' scripts call (LabKey's client libraries: Python's `labkey`, R's
/// Rlabkey), in the container paths a MyStudies deployment used: `/<orgId>/<appId>/<studyId>/`
/// or the study id alone, then `<controller>-<action>.api`. Signed in with an API key of an admin
/// who holds a role on the study (`RemoteAPIKeyAuthenticator`); answered in LabKey's shapes and
/// error envelope (docs/response-api.md, The LabKey API for researchers).
///
/// Served: `login-whoami.api`, which the clients call first; the query calls
/// (`LabKeyResearcherQueries`); and LabKey's permission error for the writes (`query-insertRows`
/// and the others): the data is read-only here.
package struct LabKeyResearcherRoutes: Sendable {
    /// The controllers of the researchers' API, to tell its paths (and their error format) apart.
    package static let controllers = ["login-", "query-"]
    /// LabKey's writes, refused: rows come only from the apps' responses.
    static let writes: Set<String> = [
        "query-insertrows.api", "query-updaterows.api", "query-deleterows.api", "query-saverows.api",
        "query-truncatetable.api", "query-moverows.api", "query-importdata.api",
    ]

    package let catalog: StudyCatalog
    package let authenticator: RemoteAPIKeyAuthenticator
    package let queries: LabKeyResearcherQueries

    package init(catalog: StudyCatalog, authenticator: RemoteAPIKeyAuthenticator, queries: LabKeyResearcherQueries) {
        self.catalog = catalog
        self.authenticator = authenticator
        self.queries = queries
    }

    package func add(to router: Router<ServiceRequestContext>) {
        // The router takes one parameter name per position, and the apps' API holds `/:call`: the
        // first folder is `call` here too, the second `folder` in both shapes. (A catch-all would
        // also answer the other routes' paths for the methods they do not take, 404 for 405.)
        let authenticator = self.authenticator
        let researchers = CallerRoutes(router) { request, context in try await authenticator.authenticate(request, logger: context.logger) }
        for path in ["/:call/:folder", "/:call/:folder/:study/:action"] {
            researchers.get(RouterPath(stringLiteral: path), use: handle)
            researchers.post(RouterPath(stringLiteral: path), use: handle)
        }
    }

    /// Whether a path's last segment is one of this API's calls (`controller-action.api`).
    package static func isCall(_ segment: String) -> Bool {
        let lower = segment.lowercased()
        return lower.hasSuffix(".api") && controllers.contains { lower.hasPrefix($0) && lower.count > $0.count + 4 }
    }

    @Sendable package func handle(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> Response {
        // `/<studyId>/<call>` or `/<orgId>/<appId>/<studyId>/<call>`: the study is the last folder.
        let first = try context.parameters.decoded("call")
        let second = try context.parameters.decoded("folder")
        let (studyId, call) =
            if context.parameters.get("study") != nil { (try context.parameters.decoded("study"), try context.parameters.decoded("action")) } else { (first, second) }
        guard Self.isCall(call) else { throw APIError.notFound("no such path") }
        guard let study = try await catalog.study(studyId) else {
            throw APIError.notFound("Folder \(studyId) was not found: no study has that id here")
        }
        guard admin.may(.viewer, on: study.studyId) else {
            throw APIError.forbidden("User does not have permission to perform this operation.")
        }
        let action = call.lowercased()
        if Self.writes.contains(action) {
            throw APIError.forbidden("User does not have permission to perform this operation. The study's data is read-only.")
        }
        if action == "login-whoami.api" { return try LabKeyCall.reply(Self.whoAmI(admin)) }
        let handler: @Sendable (LabKeyResearcherQueries.Context) async throws -> Response
        switch action {
        case "query-getquery.api", "query-selectrows.api": handler = queries.getQuery
        case "query-executesql.api": handler = queries.executeSQL
        case "query-getschemas.api": handler = queries.getSchemas
        case "query-getqueries.api": handler = queries.getQueries
        case "query-getquerydetails.api": handler = queries.getQueryDetails
        default: throw APIError.notFound("Unknown action: \(call)")
        }
        let parameters = try await LabKeyResearcherRequest.read(request)
        return try await handler(.init(study: study, caller: admin.adminId, parameters: parameters))
    }

    /// LabKey's `whoami`: the user, and a CSRF token. The clients fetch the token before anything
    /// else and send it back with each POST; a request signed in with an API key carries no cookie,
    /// so there is nothing for the token to protect, and it is not checked. It is derived from the
    /// admin's id, so it is the same on every replica and says nothing of the key.
    struct WhoAmI: Encodable {
        var id: Int
        var displayName: String
        var email: String
        var impersonated: Bool
        var CSRF: String
        var success: Bool
    }

    static func whoAmI(_ admin: AdminIdentity) -> WhoAmI {
        let digest = Array(SHA256.hash(data: Data(admin.adminId.uuidString.lowercased().utf8)))
        // LabKey's user ids are positive integers; this one is stable per admin.
        let id = digest.prefix(4).reduce(0) { ($0 << 8) | Int($1) } & 0x7fff_ffff
        let csrf = digest.suffix(16).hexString
        return WhoAmI(id: id, displayName: admin.email, email: admin.email, impersonated: false, CSRF: csrf, success: true)
    }
}
