import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `PUT /internal/v1/apps/{appId}`: study-metadata sends an app's definition whenever an admin
/// creates or changes it (signed; only study-metadata may call it).
package struct InternalAppRoutes {
    package struct Received: ResponseEncodable {
        /// False when a newer revision was already here (a late or repeated delivery).
        package var applied: Bool
    }

    package let settings: AppSettingsStore

    package init(settings: AppSettingsStore) {
        self.settings = settings
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.put("/v1/apps/:appId", use: receive)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Received {
        try context.requireCaller(.studyMetadata, "sends app settings")
        let appId = try context.parameters.decoded("appId")
        let buffer = try await request.body.collect(upTo: context.maxUploadSize)
        guard let sync = try? JSONDecoder().decode(AppSettingsSync.self, from: Data(buffer: buffer)) else {
            throw APIError.badRequest("the body is not an app settings message")
        }
        guard sync.app.appId == appId else { throw APIError.badRequest("the body is for app \(sync.app.appId), not \(appId)") }
        let problems = sync.app.problems()
        guard problems.isEmpty else {
            throw APIError.badRequest("the app definition is invalid: \(problems.map { "\($0.pointer) \($0.message)" }.joined(separator: "; "))")
        }
        return Received(applied: try await settings.save(sync))
    }
}
