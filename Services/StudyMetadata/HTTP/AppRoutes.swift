import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `POST|GET /admin/v1/apps`, `GET|PUT /admin/v1/apps/{appId}`,
/// `POST /admin/v1/apps/{appId}/testing-credentials`.
package struct AppRoutes {
    package let administration: AppAdministration
    /// The apps, read as stored.
    package let apps: AppStore
    package let authenticator: AdminTokenAuthenticator

    package init(administration: AppAdministration, apps: AppStore, authenticator: AdminTokenAuthenticator) {
        self.administration = administration
        self.apps = apps
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/apps", use: create)
        router.get("/admin/v1/apps", use: list)
        router.get("/admin/v1/apps/:appId", use: get)
        router.put("/admin/v1/apps/:appId", use: update)
        router.post("/admin/v1/apps/:appId/testing-credentials", use: issueTestingCredentials)
    }

    @Sendable package func issueTestingCredentials(
        _ request: Request, context: ServiceRequestContext
    ) async throws -> EditedResponse<TestingCredentials> {
        let admin = try await authenticator.requireSuperAdmin(request)
        let appId = try context.parameters.decoded("appId")
        return EditedResponse(
            status: .created, response: try await administration.issueTestingCredentials(appId: appId, by: admin.email))
    }

    @Sendable package func create(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<AppCreated> {
        let admin = try await authenticator.requireSuperAdmin(request)
        let app = try await DocumentBody.decode(AppDefinition.self, named: "app", from: request, context: context)
        return EditedResponse(status: .created, response: try await administration.create(app, by: admin.email))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> AppList {
        _ = try await authenticator.authenticate(request)
        return AppList(apps: try await apps.list())
    }

    @Sendable package func get(_ request: Request, context: ServiceRequestContext) async throws -> AppDefinition {
        _ = try await authenticator.authenticate(request)
        let appId = try context.parameters.decoded("appId")
        guard let app = try await apps.app(id: appId) else { throw StudyMetadataError.noApp(appId) }
        return app
    }

    @Sendable package func update(_ request: Request, context: ServiceRequestContext) async throws -> AppDefinition {
        let admin = try await authenticator.requireSuperAdmin(request)
        let appId = try context.parameters.decoded("appId")
        let app = try await DocumentBody.decode(AppDefinition.self, named: "app", from: request, context: context)
        try await administration.update(app, appId: appId, by: admin.email)
        return app
    }
}

extension AppDefinition: ResponseEncodable {}
