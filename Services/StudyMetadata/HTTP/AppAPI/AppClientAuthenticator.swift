import HTTPTypes
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// The app a `/StudyMetaData` request comes from, told by its Basic credential.
package struct AppClient: Sendable {
    package let appId: String
    package let platform: Platform
    /// A test build's credential: the app's studies in testing are served too.
    package let testing: Bool
    /// The `language` header or parameter; English when absent.
    package let language: String?
    /// The request's parameters (this API takes only GET, so only its query string), parsed
    /// once.
    package let parameters: LegacyEnvelope

    /// A parameter as it was sent (perhaps empty), nil when absent.
    package func string(_ name: String) -> String? {
        parameters.parameters[name]?.text
    }
}

/// Checks the `Authorization: Basic key:token` the apps send. The credential names its app and
/// platform; an `applicationId` header naming another app is refused, so one app's credential
/// cannot read another app's studies.
package struct AppClientAuthenticator: Sendable {
    package let apps: AppStore

    package init(apps: AppStore) {
        self.apps = apps
    }

    package static let invalidKey = APIError(
        .unauthorized, code: "unauthenticated", message: "Invalid Authorization key",
        statusMessageCode: .invalidAuthorization)

    package func authenticate(_ request: Request) async throws -> AppClient {
        guard let header = request.headers[.authorization],
            let credential = try await apps.authenticate(basicHeader: header)
        else { throw Self.invalidKey }
        if let claimed = request.headers[.applicationId], !claimed.isEmpty, claimed != credential.appId {
            throw Self.invalidKey
        }
        let parameters = LegacyEnvelope(query: request)
        let language = request.headers[.language] ?? parameters.parameters["language"]?.text
        return AppClient(
            appId: credential.appId, platform: credential.platform, testing: credential.testing, language: language,
            parameters: parameters)
    }

    /// The app API's calls under `routes`: each is told its app before its handler runs, and the
    /// handler is given it.
    package func routes(_ routes: any RouterMethods<ServiceRequestContext>) -> CallerRoutes<AppClient> {
        CallerRoutes(routes) { request, _ in try await authenticate(request) }
    }
}
