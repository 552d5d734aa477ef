import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import ServiceLifecycle
import StudyModels
import TestSupport

/// Builds a ServiceKit application for tests, with the settings of `service` against `databaseURL`.
func makeApp(
    databaseURL: String,
    service: ServiceName = .studyMetadata,
    overrides: [String: String] = [:],
    migrations: [Migration] = [],
    logger: Logger = Logger(label: "servicekit-test"),
    errorFormat: @escaping @Sendable (String) -> ErrorFormat = { _ in .admin },
    addRoutes: (ServiceRoutes, ServiceEnvironment) throws -> [any Service] = { _, _ in [] },
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) throws -> ServiceApplication {
    let descriptor = ServiceDescriptor(name: service, defaultPort: 0, defaultDatabase: "unused", migrations: migrations)
    let settings = try ServiceSettings(
        reader: TestConfiguration.reader(for: service, databaseURL: databaseURL, overrides: overrides),
        descriptor: descriptor)
    return try buildServiceApplication(
        descriptor: descriptor, settings: settings, logger: logger, errorFormat: errorFormat, addRoutes: addRoutes,
        onServerRunning: onServerRunning)
}
