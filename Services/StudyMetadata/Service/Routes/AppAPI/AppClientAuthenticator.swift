import HTTPTypes
import Hummingbird
import ServiceKit
import StudyModels

/// The app a `/StudyMetaData` request comes from, told by its Basic credential.
struct AppClient: Sendable {
    let appId: String
    let platform: Platform
    /// The `language` header or parameter; English when absent.
    let language: String?
    /// The request's query parameters, parsed once (Hummingbird parses on every access).
    let query: Parameters
}

/// Checks the `Authorization: Basic key:token` the apps send. The credential names its app and
/// platform; an `applicationId` header naming another app is refused, so one app's credential
/// cannot read another app's studies.
struct AppClientAuthenticator: Sendable {
    let apps: AppStore

    static let invalidKey = APIError(
        .unauthorized, code: "unauthenticated", message: "Invalid Authorization key",
        statusMessageCode: .invalidAuthorization)

    func authenticate(_ request: Request) async throws -> AppClient {
        guard let header = request.headers[.authorization],
            let (appId, platform) = try await apps.authenticate(basicHeader: header)
        else { throw Self.invalidKey }
        if let claimed = request.headers[HTTPField.Name("applicationId")!], !claimed.isEmpty, claimed != appId {
            throw Self.invalidKey
        }
        let query = request.uri.formParameters
        let language = request.headers[HTTPField.Name("language")!] ?? query["language"].map(String.init)
        return AppClient(appId: appId, platform: platform, language: language, query: query)
    }
}
