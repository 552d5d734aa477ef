import AdminAuthHTTP
import AdminContracts
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

    package init(administration: AppAdministration, apps: AppStore) {
        self.administration = administration
        self.apps = apps
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.createApp, use: create)
        routes.on(AdminCalls.apps, use: list)
        routes.on(AdminCalls.app, use: get)
        routes.on(AdminCalls.updateApp, use: update)
        routes.on(AdminCalls.testingCredentials, use: issueTestingCredentials)
    }

    @Sendable package func issueTestingCredentials(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<TestingCredentials> {
        let appId = try context.parameters.decoded("appId")
        return EditedResponse(
            status: .created, response: try await administration.issueTestingCredentials(appId: appId, by: admin.email))
    }

    @Sendable package func create(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<AppCreated> {
        let app = try await DocumentBody.decode(AppDefinition.self, named: "app", from: request, context: context)
        return EditedResponse(status: .created, response: try await administration.create(app, by: admin.email))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> AppList {
        return AppList(apps: try await apps.list())
    }

    @Sendable package func get(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> AppDefinition {
        let appId = try context.parameters.decoded("appId")
        guard let app = try await apps.app(id: appId) else { throw StudyMetadataError.noApp(appId) }
        return app
    }

    @Sendable package func update(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> AppDefinition {
        let appId = try context.parameters.decoded("appId")
        let app = try await DocumentBody.decode(AppDefinition.self, named: "app", from: request, context: context)
        try await administration.update(app, appId: appId, by: admin.email)
        return app
    }
}

extension AppDefinition: ResponseEncodable {}
