/// Wire types of the signed service-to-service API under `/internal/v1`.

/// The names the three services sign their internal calls with (`X-StudyStack-Service`).
public enum ServiceName: String, Codable, Sendable, CaseIterable {
    case studyMetadata = "study-metadata"
    case registration = "registration"
    case response = "response"
}

/// Reply of `GET /internal/v1/whoami`: which caller the receiving service authenticated, so an
/// operator can check that the keys on both sides agree.
public struct WhoAmIResponse: Codable, Sendable, Equatable {
    /// The service that answered.
    public var service: String
    /// The authenticated caller named in `X-StudyStack-Service`.
    public var caller: String

    public init(service: String, caller: String) {
        self.service = service
        self.caller = caller
    }
}

/// Reply of `GET /readyz`.
public struct ReadinessReport: Codable, Sendable, Equatable {
    public var ready: Bool
    public var service: String
    /// Why the service is not ready, when it is not.
    public var reason: String?
    /// Migrations known to the binary that the database has not recorded.
    public var pendingMigrations: [String]?

    public init(ready: Bool, service: String, reason: String? = nil, pendingMigrations: [String]? = nil) {
        self.ready = ready
        self.service = service
        self.reason = reason
        self.pendingMigrations = pendingMigrations
    }
}
