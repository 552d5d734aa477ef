import AdminContracts
import Foundation
import InternalContracts
import Logging
import RegistrationCore
import RegistrationHTTP
import RegistrationService
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import Testing
import TestSupport

/// Every route a service mounts has an operation in its OpenAPI documents under `docs/openapi/`,
/// and every documented operation exists: the documents cannot drift from the code.
@Suite struct OpenAPICoverageTests {
    static func operations(in names: [String]) throws -> Set<String> { try OpenAPIDocuments.operations(in: names) }
    static func openAPIPath(_ path: String) -> String { OpenAPIDocuments.openAPIPath(path) }

    /// The internal routes a service mounts are exactly the definitions it receives: none is
    /// spelled by hand beside them.
    static func expectInternalRoutesAreDefinitions(_ mounted: Set<String>, receiver: ServiceName) {
        let defined = Set(InternalCalls.all.filter { $0.receiver == receiver }.map { "\($0.method.rawValue) \($0.template)" })
        #expect(defined.count > 2)
        #expect(mounted.filter { $0.contains(" /internal/") } == defined, "internal routes mounted without a definition in InternalCalls")
    }

    /// The admin routes a service mounts are exactly the definitions of its endpoints in
    /// `AdminCalls`, the ones the console calls through.
    static func expectAdminRoutesAreDefinitions(_ mounted: Set<String>, service: ServiceName) {
        let defined = Set(
            AdminCalls.all.filter { $0.service == service }.map { "\($0.method.rawValue) \(openAPIPath($0.path.routePattern()))" })
        #expect(defined.count > 10)
        #expect(mounted.filter { $0.contains(" /admin/") } == defined, "admin routes mounted without a definition in AdminCalls")
    }

    @Test func studyMetadataRoutesAreAllDocumented() throws {
        let catalog = RouteCatalog()
        let reader = TestConfiguration.reader(
            for: .studyMetadata, databaseURL: "postgres://nobody@127.0.0.1:9/unused?sslmode=disable",
            overrides: ["studystack.adminEmail": "root@studystack.test", "studystack.adminPassword": "Sup3r-Secret!"])
        _ = try StudyMetadataService.buildApplication(reader: reader, logger: Logger(label: "routes"), routeCatalog: catalog)
        let mounted = Set(catalog.routes.map { "\($0.method) \(Self.openAPIPath($0.path))" })
        #expect(mounted.count > 40)
        Self.expectInternalRoutesAreDefinitions(mounted, receiver: .studyMetadata)
        Self.expectAdminRoutesAreDefinitions(mounted, service: .studyMetadata)
        if ProcessInfo.processInfo.environment["PRINT_ROUTES"] == "1" { print(mounted.sorted().joined(separator: "\n")) }
        let documented = try Self.operations(in: [
            "study-metadata-app.yaml", "study-metadata-admin.yaml", "study-metadata-internal.yaml",
        ])
        #expect(mounted.subtracting(documented).sorted() == [], "routes without a documented operation")
        #expect(documented.subtracting(mounted).sorted() == [], "documented operations without a route")
    }

    @Test func registrationRoutesAreAllDocumented() throws {
        let catalog = RouteCatalog()
        let reader = TestConfiguration.reader(
            for: .registration, databaseURL: "postgres://nobody@127.0.0.1:9/unused?sslmode=disable")
        _ = try RegistrationService.buildApplication(reader: reader, logger: Logger(label: "routes"), routeCatalog: catalog)
        // The lower-case controller alias mirrors the documented paths, and the 405 answers of the
        // DELETE-only calls are described in those calls' summaries.
        let refusals: Set<String> = Set(["logout", "withdraw", "deactivate"].flatMap { name in
            ["GET", "POST", "PUT"].map { "\($0) /fdahpUserRegWS/\(name).api" }
        })
        let mounted = Set(catalog.routes.map { "\($0.method) \(Self.openAPIPath($0.path))" })
            .filter { !$0.contains("/fdahpuserregws/") }
            .subtracting(refusals)
        let own = try Self.operations(in: ["registration-app.yaml", "registration-admin.yaml", "registration-internal.yaml"])
        // /healthz, /readyz, /metrics and whoami are ServiceKit's, documented once.
        let shared = try Self.operations(in: ["study-metadata-internal.yaml"])
        #expect(mounted.count > 25)
        Self.expectInternalRoutesAreDefinitions(mounted, receiver: .registration)
        Self.expectAdminRoutesAreDefinitions(mounted, service: .registration)
        #expect(mounted.subtracting(own.union(shared)).sorted() == [], "routes without a documented operation")
        #expect(own.subtracting(mounted).sorted() == [], "documented operations without a route")
    }

    @Test func responseRoutesAreAllDocumented() throws {
        let catalog = RouteCatalog()
        let reader = TestConfiguration.reader(
            for: .response, databaseURL: "postgres://nobody@127.0.0.1:9/unused?sslmode=disable")
        _ = try ResponseService.buildApplication(reader: reader, logger: Logger(label: "routes"), routeCatalog: catalog)
        // The app API is one route per path segment, dispatched on the action: it stands for the
        // documented `/mobileappstudy-<action>.api` operations (the `response-` prefix and any
        // casing reach the same actions and are described in the document).
        var mounted = Set(catalog.routes.map { "\($0.method) \(Self.openAPIPath($0.path))" })
        #expect(mounted.contains("POST /{call}"))
        Self.expectInternalRoutesAreDefinitions(mounted, receiver: .response)
        Self.expectAdminRoutesAreDefinitions(mounted, service: .response)
        mounted.subtract(["POST /{call}", "GET /{call}"])
        mounted.formUnion(MobileAppRoutes.actions.map { "POST /mobileappstudy-\($0.name).api" })
        mounted.formUnion(MobileAppRoutes.actions.filter { !$0.postOnly }.map { "GET /mobileappstudy-\($0.name).api" })
        // The researchers' LabKey API names its folders as the router must (one name a position),
        // documented with the names a reader expects.
        #expect(mounted.contains("GET /{call}/{folder}"))
        mounted.subtract(["GET", "POST"].flatMap { ["\($0) /{call}/{folder}", "\($0) /{call}/{folder}/{study}/{action}"] })
        mounted.formUnion(["GET", "POST"].flatMap { ["\($0) /{studyId}/{call}", "\($0) /{orgId}/{appId}/{studyId}/{call}"] })
        let own = try Self.operations(in: [
            "response-app.yaml", "response-admin.yaml", "response-internal.yaml", "response-labkey.yaml", "response-fhir.yaml",
        ])
        let shared = try Self.operations(in: ["study-metadata-internal.yaml"])
        #expect(mounted.subtracting(own.union(shared)).sorted() == [], "routes without a documented operation")
        #expect(own.subtracting(mounted).sorted() == [], "documented operations without a route")
    }
}
