import Configuration
import Foundation
import Logging
import RegistrationCore
import RegistrationHTTP
import ServiceKit
import ServiceKitHTTP

/// Assembly point of the registration service.
public enum RegistrationService: ServiceAssembly {
    public static let descriptor = ServiceDescriptor(
        name: .registration,
        defaultPort: 8082,
        defaultDatabase: "studystack_registration",
        migrations: RegistrationMigrations.all
    )

    /// Builds the application from parsed settings (what `main` does).
    public static func buildApplication(
        reader: ConfigReader, settings: ServiceSettings, logger: Logger, routeCatalog: RouteCatalog?
    ) throws -> ServiceApplication {
        let registration = try RegistrationSettings(reader: reader)
        let hasher = PasswordHasher(cost: UInt8(registration.bcryptCost))
        return try buildServiceApplication(
            descriptor: descriptor, settings: settings, logger: logger,
            errorFormat: { path in UserRegPaths.isRegistrationPath(path) ? .statusMessage : .admin },
            addRoutes: { routes, environment in
                let parts = RegistrationParts(environment: environment, registration: registration, hasher: hasher)
                mountRoutes(parts, on: routes)
                return workers(parts)
            },
            afterMigrations: { environment in
                let sealed = try await StudyStateStore(
                    client: environment.postgres, seal: RowSeal.appTokens(encryptionKey: registration.encryptionKey),
                    audit: environment.audit, logger: environment.logger
                ).sealLegacy()
                if sealed > 0 { environment.logger.notice("sealed participant ids kept in clear", metadata: ["rows": "\(sealed)"]) }
            },
            routeCatalog: routeCatalog)
    }
}
