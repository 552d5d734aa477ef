import Foundation
import Hummingbird
import InternalContracts
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `PUT /internal/v1/apps/{appId}`: study-metadata sends an app's definition whenever an admin
/// creates or changes it (signed; only study-metadata may call it).
package struct InternalAppRoutes {
    package let settings: AppSettingsStore

    package init(settings: AppSettingsStore) {
        self.settings = settings
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.appSettings, use: receive)
    }

    @Sendable package func receive(_ call: InternalRequest<AppSettingsSync>) async throws -> MessageApplied {
        let appId = try call.parameter("appId")
        let sync = call.body
        guard sync.app.appId == appId else { throw APIError.badRequest("the body is for app \(sync.app.appId), not \(appId)") }
        let problems = sync.app.problems()
        guard problems.isEmpty else {
            throw APIError.badRequest("the app definition is invalid: \(problems.map { "\($0.pointer) \($0.message)" }.joined(separator: "; "))")
        }
        return MessageApplied(applied: try await settings.save(sync))
    }
}
