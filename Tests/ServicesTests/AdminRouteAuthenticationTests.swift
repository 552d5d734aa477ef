import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import ResponseService
import ServiceKitHTTP
import StudyMetadataService
import Testing
import TestSupport

/// Authentication is the first call of every admin handler, not a middleware (the role a call
/// needs depends on the study in its path). What a middleware would guarantee is checked here
/// instead, from the routes the services actually mount: every admin route but sign-in and
/// accepting an invitation answers 401 to a call without a token, before it reads the body or
/// looks anything up.
@Suite struct AdminRouteAuthenticationTests {
    /// The admin API's calls that are open by design.
    static let open: Set<String> = ["POST /admin/v1/login", "POST /admin/v1/invitations/accept"]

    /// Every admin route of `catalog`, with sample values in its path parameters.
    static func adminRoutes(_ catalog: RouteCatalog) -> [(method: HTTPRequest.Method, path: String)] {
        catalog.routes
            .filter { $0.path.hasPrefix("/admin/") && !open.contains("\($0.method) \($0.path)") }
            .map { route in
                let path = route.path.split(separator: "/", omittingEmptySubsequences: false)
                    .map { $0.hasPrefix(":") || $0.hasPrefix("{") ? "SAMPLE1" : String($0) }.joined(separator: "/")
                return (HTTPRequest.Method(route.method)!, path)
            }
    }

    func expectEachRefused(_ routes: [(method: HTTPRequest.Method, path: String)], on client: some TestClientProtocol)
        async throws
    {
        for (method, path) in routes {
            let status = try await client.execute(
                uri: path, method: method, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}")
            ) { $0.status }
            #expect(status == .unauthorized, "\(method) \(path) answered \(status) without a token")
        }
    }

    @Test func everyStudyMetadataAdminRouteNeedsAToken() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let catalog = RouteCatalog()
            let app = try StudyMetadataService.buildApplication(
                reader: TestConfiguration.reader(for: .studyMetadata, databaseURL: url), logger: Logger(label: "auth"),
                routeCatalog: catalog)
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                let routes = Self.adminRoutes(catalog)
                #expect(routes.count > 20, "\(routes.count) admin routes")
                try await expectEachRefused(routes, on: client)
            }
        }
    }

    @Test func everyResponseAdminRouteNeedsAToken() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let catalog = RouteCatalog()
            let reader = TestConfiguration.reader(
                for: .response, databaseURL: url, overrides: ["query.databaseURL": try await ResponseHarness.readerURL(url)])
            let app = try ResponseService.buildApplication(reader: reader, logger: Logger(label: "auth"), routeCatalog: catalog)
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                let routes = Self.adminRoutes(catalog)
                #expect(routes.count > 10, "\(routes.count) admin routes")
                try await expectEachRefused(routes, on: client)
            }
        }
    }
}
