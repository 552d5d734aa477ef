import Logging

/// What every StudyStack process reads before it builds anything: where it listens and how it
/// logs. A service's `ServiceSettings` adds its database and keys; the console has neither.
public protocol ProcessSettings: Sendable {
    var host: String { get }
    var port: Int { get }
    var logLevel: ServiceSettings.LogLevel { get }
    var logFormat: ServiceSettings.LogFormat { get }
    /// What the "starting" log line says besides the address (a service names its database).
    var startMetadata: Logger.Metadata { get }
}

extension ServiceSettings: ProcessSettings {
    public var startMetadata: Logger.Metadata { ["database": "\(database.database)"] }
}
