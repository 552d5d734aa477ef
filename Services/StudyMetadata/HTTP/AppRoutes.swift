import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `POST|GET /admin/v1/apps`, `GET|PUT /admin/v1/apps/{appId}`.
package struct AppRoutes {
    package let store: AppStore
    package let authenticator: AdminTokenAuthenticator
    package let audit: AuditLog

    package init(store: AppStore, authenticator: AdminTokenAuthenticator, audit: AuditLog) {
        self.store = store
        self.authenticator = authenticator
        self.audit = audit
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/apps", use: create)
        router.get("/admin/v1/apps", use: list)
        router.get("/admin/v1/apps/:appId", use: get)
        router.put("/admin/v1/apps/:appId", use: update)
    }

    @Sendable package func create(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<AppCreated> {
        let admin = try await authenticator.requireSuperAdmin(request)
        let app = try await DocumentBody.decode(AppDefinition.self, named: "app", from: request, context: context)
        let problems = app.problems()
        guard problems.isEmpty else { throw DocumentBody.rejected(problems, in: "app") }
        let credentials: [AppStore.IssuedCredential]
        switch try await store.create(app) {
        case .created(let issued): credentials = issued
        case .idTaken:
            throw APIError.conflict("an app with id \(app.appId) already exists (app ids are unique whatever their case)")
        case .orgSpelledOtherwise(let existing): throw Self.orgConflict(existing, app)
        }
        try await audit.record(actor: admin.email, action: "app.created", details: ["appId": app.appId])
        return EditedResponse(
            status: .created,
            response: AppCreated(
                app: app,
                credentials: Dictionary(uniqueKeysWithValues: credentials.map { ($0.platform.rawValue, $0.basic) })))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> AppList {
        _ = try await authenticator.authenticate(request)
        return AppList(apps: try await store.list())
    }

    @Sendable package func get(_ request: Request, context: ServiceRequestContext) async throws -> AppDefinition {
        _ = try await authenticator.authenticate(request)
        let appId = try context.parameters.require("appId")
        guard let app = try await store.app(id: appId) else { throw APIError.notFound("no app \(appId)") }
        return app
    }

    @Sendable package func update(_ request: Request, context: ServiceRequestContext) async throws -> AppDefinition {
        let admin = try await authenticator.requireSuperAdmin(request)
        let appId = try context.parameters.require("appId")
        let app = try await DocumentBody.decode(AppDefinition.self, named: "app", from: request, context: context)
        var problems = app.problems()
        if app.appId != appId {
            problems.append(ValidationProblem(pointer: "/appId", message: "must be \(appId), the app in the path; an app id never changes"))
        }
        guard problems.isEmpty else { throw DocumentBody.rejected(problems, in: "app") }
        switch try await store.update(app) {
        case .updated: break
        case .notFound: throw APIError.notFound("no app \(appId)")
        case .orgSpelledOtherwise(let existing): throw Self.orgConflict(existing, app)
        }
        try await audit.record(actor: admin.email, action: "app.updated", details: ["appId": appId])
        return app
    }

    package static func orgConflict(_ existing: String, _ app: AppDefinition) -> APIError {
        APIError.conflict("org id \(app.orgId) is spelled \(existing) by another app; org ids are unique whatever their case")
    }
}

extension AppDefinition: ResponseEncodable {}
