import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import RegistrationService
import ResponseService
import ServiceKitHTTP
import StudyMetadataService
import Testing
import TestSupport

/// Authentication is the first call of every handler, not a middleware (the role an admin call
/// needs depends on the study in its path; a participant call names its user). What a middleware
/// would guarantee is checked here instead, from the routes the services actually mount: every
/// admin route but sign-in and accepting an invitation, and every participant call but those that
/// start a session, answers 401 to a call without credentials, before it reads the body or looks
/// anything up.
@Suite(.needsCluster) struct RouteAuthenticationTests {
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

    @Test func everyRegistrationAdminRouteNeedsAToken() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let catalog = RouteCatalog()
            let app = try RegistrationService.buildApplication(
                reader: TestConfiguration.reader(for: .registration, databaseURL: url), logger: Logger(label: "auth"),
                routeCatalog: catalog)
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                let routes = Self.adminRoutes(catalog)
                #expect(routes.count >= 1, "\(routes.count) admin routes")
                try await expectEachRefused(routes, on: client)
            }
        }
    }

    /// The registration calls the apps make before they have a session.
    static let openParticipantCalls: Set<String> = [
        "ping", "register", "verify", "resendConfirmation", "confirmRegistration", "login", "refreshToken",
        "forgotPassword", "feedback", "contactUs", "versionInfo",
    ]

    @Test func everyParticipantCallThatNeedsASessionRefusesOneWithout() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let catalog = RouteCatalog()
            let app = try RegistrationService.buildApplication(
                reader: TestConfiguration.reader(for: .registration, databaseURL: url), logger: Logger(label: "auth"),
                routeCatalog: catalog)
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                // The calls under the documented controller; the 405 answers of the DELETE-only
                // calls to other methods are not calls.
                let calls = catalog.routes.filter { $0.path.hasPrefix("/fdahpUserRegWS/") }.filter { route in
                    !["logout", "withdraw", "deactivate"].contains { route.path.hasSuffix("/\($0).api") && route.method != "DELETE" }
                }
                let needingSession = calls.filter { route in
                    !Self.openParticipantCalls.contains { route.path == "/fdahpUserRegWS/\($0).api" }
                }
                #expect(calls.count - needingSession.count == Self.openParticipantCalls.count, "every open call is mounted")
                #expect(needingSession.count >= 14, "\(needingSession.map(\.path))")
                for route in needingSession {
                    let status = try await client.execute(
                        uri: route.path, method: HTTPRequest.Method(route.method)!,
                        headers: [
                            .contentType: "application/json", HTTPField.Name("applicationId")!: "DEMOAPP",
                            HTTPField.Name("orgId")!: "DEMOORG",
                        ],
                        body: ByteBuffer(string: "{}")
                    ) { $0.status }
                    #expect(status == .unauthorized, "\(route.method) \(route.path) answered \(status) without a session")
                }
            }
        }
    }
}
