import AdminAuthHTTP
import AdminContracts
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Synchronization
import Testing

/// The admin API's definitions (`AdminCalls`) and the router built from them: every endpoint is
/// defined once and well formed, and a handler is reached only by an admin holding the access its
/// definition names (docs/admin-api.md, Access).
@Suite struct AdminContractTests {
    @Test func everyEndpointIsDefinedOnceUnderTheAdminPrefix() {
        let all = AdminCalls.all
        #expect(all.count == 104)
        let routes = all.map { "\($0.method.rawValue) \($0.path.routePattern())" }
        #expect(Set(routes).count == all.count, "two definitions of one route")
        for endpoint in all {
            #expect(endpoint.path.template.hasPrefix(AdminAPI.prefix + "/"), "\(endpoint.path)")
            #expect(!endpoint.path.template.contains("{}"), "\(endpoint.path)")
            if case .study = endpoint.access {
                #expect(endpoint.path.parameterNames.first == "studyId", "\(endpoint.path) checks a role on a study it does not name")
            }
        }
        let open = all.filter { $0.access == .anyone }.map(\.path.template).sorted()
        #expect(open == ["/admin/v1/invitations/accept", "/admin/v1/login"])
    }

    @Test func aPathIsFilledOneEscapedSegmentPerParameter() throws {
        let filled = AdminCalls.participant.path.filled(["studyId": "S 1/x", "participantId": "p?#"])
        #expect(try filled.get() == "/admin/v1/studies/S%201%2Fx/participants/p%3F%23")
        switch AdminCalls.participant.path.filled(["studyId": "S1", "participantId": ""]) {
        case .success(let path): Issue.record("an empty parameter filled in as \(path)")
        case .failure(let missing): #expect(missing.name == "participantId")
        }
        #expect(AdminCalls.tableRows.path.routePattern() == "/admin/v1/studies/:studyId/tables/:table/rows")
        #expect(AdminCalls.tableRows.path.routePattern(under: AdminAPI.prefix) == "/studies/:studyId/tables/:table/rows")
    }

    /// An authenticator that knows two tokens: a super-admin's and a viewer's of study S1.
    struct TwoAdmins: AdminAuthenticating {
        func authenticate(_ request: Request, logger: Logger) async throws -> AdminIdentity {
            switch request.bearerToken {
            case "root": AdminIdentity(adminId: UUID(), email: "root@example.org", role: .superAdmin, studyRoles: [:])
            case "viewer": AdminIdentity(adminId: UUID(), email: "v@example.org", role: .admin, studyRoles: ["S1": .viewer])
            default: throw APIError.unauthenticated("the token is unknown, expired or revoked; log in again")
            }
        }
    }

    /// Each endpoint's access holds before its handler runs: no token 401, a viewer refused an
    /// editor's or a super-admin's endpoint and any role on another study (403, with the
    /// definition's words where it has them), and the handler counts only admitted calls.
    @Test func aHandlerIsReachedOnlyWithTheAccessItsDefinitionNames() async throws {
        let reached = Mutex(0)
        let router = Router(context: ServiceRequestContext.self)
        router.addMiddleware { ErrorMiddleware(format: { _ in .admin }) }
        let admin = AdminRouter(router, authenticator: TwoAdmins())
        for endpoint in [AdminCalls.sites] {
            admin.on(endpoint) { _, _, who -> String in
                reached.withLock { $0 += 1 }
                return who.email
            }
        }
        admin.on(AdminCalls.storageCheck) { _, _, _ -> String in reached.withLock { $0 += 1 }; return "checked" }
        admin.on(AdminCalls.appUsers) { _, _, _ -> String in reached.withLock { $0 += 1 }; return "users" }
        admin.onPublic(AdminCalls.login) { _, _ -> String in "open" }
        // Mounted as public by mistake: refused to everyone rather than served unchecked.
        admin.onPublic(AdminCalls.me) { _, _ -> String in reached.withLock { $0 += 1 }; return "unchecked" }

        try await Application(router: router).test(.router) { client in
            func call(_ method: HTTPRequest.Method, _ path: String, _ token: String?) async throws -> (HTTPResponse.Status, String) {
                var headers = HTTPFields()
                if let token { headers[.authorization] = "Bearer \(token)" }
                return try await client.execute(uri: path, method: method, headers: headers) { ($0.status, String(buffer: $0.body)) }
            }
            #expect(try await call(.get, "/admin/v1/studies/S1/sites", nil).0 == .unauthorized)
            #expect(try await call(.get, "/admin/v1/studies/S1/sites", "stolen").0 == .unauthorized)
            #expect(try await call(.get, "/admin/v1/studies/S1/sites", "viewer") == (.ok, "v@example.org"))
            let otherStudy = try await call(.get, "/admin/v1/studies/S2/sites", "viewer")
            #expect(otherStudy.0 == .forbidden)
            #expect(otherStudy.1.contains("this needs the viewer role on study S2"), "\(otherStudy.1)")
            let editors = try await call(.get, "/admin/v1/studies/S1/storage-check", "viewer")
            #expect(editors.0 == .forbidden)
            #expect(editors.1.contains("editor role on study S1"), "\(editors.1)")
            let accounts = try await call(.get, "/admin/v1/apps/A/users", "viewer")
            #expect(accounts.0 == .forbidden)
            #expect(accounts.1.contains("only a super-admin may read or change them"), "\(accounts.1)")
            #expect(try await call(.get, "/admin/v1/studies/S2/sites", "root") == (.ok, "root@example.org"))
            #expect(try await call(.get, "/admin/v1/apps/A/users", "root") == (.ok, "users"))
            #expect(try await call(.post, "/admin/v1/login", nil) == (.ok, "open"))
            #expect(try await call(.get, "/admin/v1/me", "root").0 == .forbidden)
        }
        #expect(reached.withLock { $0 } == 3, "only the three admitted calls reach a handler")
    }

    /// A study-scoped endpoint: the token and the role on the path's study are checked before the
    /// study is looked up (a viewer of S1 cannot learn whether S2 exists), a study the lookup does
    /// not know is its 404 before the handler, and the handler is handed the study it found. An
    /// endpoint that is not about a study, mounted as one, is refused to everyone.
    @Test func aStudyEndpointLooksUpItsStudyOnceItsAccessHolds() async throws {
        let lookedUp = Mutex<[String]>([])
        let reached = Mutex(0)
        let router = Router(context: ServiceRequestContext.self)
        router.addMiddleware { ErrorMiddleware(format: { _ in .admin }) }
        let studies = AdminStudyRouter(AdminRouter(router, authenticator: TwoAdmins())) { studyId -> String in
            lookedUp.withLock { $0.append(studyId) }
            guard studyId == "S1" else { throw APIError.notFound("no study \(studyId) here") }
            return "study \(studyId)"
        }
        studies.on(AdminCalls.responses) { _, _, who, study -> String in
            reached.withLock { $0 += 1 }
            return "\(who.email) \(study)"
        }
        // Mounted as a study's by mistake: refused to everyone rather than served without one.
        studies.on(AdminCalls.me) { _, _, _, _ -> String in reached.withLock { $0 += 1 }; return "unchecked" }

        try await Application(router: router).test(.router) { client in
            func call(_ path: String, _ token: String?) async throws -> (HTTPResponse.Status, String) {
                var headers = HTTPFields()
                if let token { headers[.authorization] = "Bearer \(token)" }
                return try await client.execute(uri: path, method: .get, headers: headers) { ($0.status, String(buffer: $0.body)) }
            }
            #expect(try await call("/admin/v1/studies/S1/responses", nil).0 == .unauthorized)
            #expect(try await call("/admin/v1/studies/S2/responses", "viewer").0 == .forbidden)
            #expect(lookedUp.withLock { $0 }.isEmpty, "no lookup before the access holds")
            #expect(try await call("/admin/v1/studies/S1/responses", "viewer") == (.ok, "v@example.org study S1"))
            let unknown = try await call("/admin/v1/studies/S9/responses", "root")
            #expect(unknown.0 == .notFound)
            #expect(unknown.1.contains("no study S9 here"), "\(unknown.1)")
            #expect(try await call("/admin/v1/me", "root").0 == .forbidden)
        }
        #expect(lookedUp.withLock { $0 } == ["S1", "S9"])
        #expect(reached.withLock { $0 } == 1, "only the call on a known study the admin may see reaches the handler")
    }
}
