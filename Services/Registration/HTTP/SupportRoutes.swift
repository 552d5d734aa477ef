import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `feedback.api`, `contactUs.api` (POST JSON, no session needed) and `versionInfo.api`.
package struct SupportRoutes {
    package let messages: SupportMessages
    package let appSettings: AppSettingsStore
    package let rateLimiter: RateLimiter

    package init(messages: SupportMessages, appSettings: AppSettingsStore, rateLimiter: RateLimiter) {
        self.messages = messages
        self.appSettings = appSettings
        self.rateLimiter = rateLimiter
    }

    package func add(to router: Router<ServiceRequestContext>) {
        for controller in UserRegPaths.controllers {
            let group = router.group(RouterPath(controller))
            group.post("feedback.api", use: feedback)
            group.post("contactUs.api", use: contactUs)
            group.get("versionInfo.api", use: versionInfo)
        }
    }

    @Sendable package func feedback(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("feedback", call)
        try await messages.sendFeedback(
            subject: try call.requiredAsSent("subject"), body: try call.requiredAsSent("body"), appId: call.appId, orgId: call.orgId)
        return RegistrationSuccess()
    }

    @Sendable package func contactUs(_ request: Request, context: ServiceRequestContext) async throws -> RegistrationSuccess {
        let call = try await UserRegCall.read(request, context: context)
        try await limit("contactUs", call)
        try await messages.sendContact(
            subject: try call.requiredAsSent("subject"), body: try call.requiredAsSent("body"), email: try call.required("email"),
            firstName: call.parameters["firstName"]?.text, appId: call.appId, orgId: call.orgId)
        return RegistrationSuccess()
    }

    /// The releases the app's definition holds; "1.0" and no forced update for a platform it
    /// leaves out (as study-metadata's `versionInfo` answers).
    @Sendable package func versionInfo(_ request: Request, context: ServiceRequestContext) async throws -> VersionInfoReply {
        let call = try await UserRegCall.read(request, context: context)
        guard let app = try await appSettings.app(appId: call.appId, orgId: call.orgId) else {
            throw UserRegCall.invalidInput
        }
        func platform(_ release: AppDefinition.Release?) -> VersionInfoReply.Platform {
            .init(latestVersion: release?.latestVersion ?? "1.0", forceUpdate: release?.forceUpdate ?? false)
        }
        return VersionInfoReply(ios: platform(app.ios), android: platform(app.android))
    }

    private func limit(_ action: String, _ call: UserRegCall) async throws {
        guard try await rateLimiter.allow(action, from: call.clientAddress(using: rateLimiter.addresses)) else { throw RegistrationError.tooMany }
    }
}

extension VersionInfoReply: ResponseEncodable {}
