import Configuration
import Logging
import ServiceKit
import StudyModels

/// Assembly point of the registration service.
public enum RegistrationService {
    public static let descriptor = ServiceDescriptor(
        name: .registration,
        defaultPort: 8082,
        defaultDatabase: "studystack_registration",
        migrations: RegistrationMigrations.all
    )

    /// Builds the application from parsed settings (what `main` does).
    public static func buildApplication(
        reader: ConfigReader, settings: ServiceSettings, logger: Logger
    ) throws -> ServiceApplication {
        try buildServiceApplication(descriptor: descriptor, settings: settings, logger: logger)
    }

    /// Builds the application from a configuration reader (what tests do).
    public static func buildApplication(reader: ConfigReader, logger: Logger) throws -> ServiceApplication {
        try buildApplication(reader: reader, settings: ServiceSettings(reader: reader, descriptor: descriptor), logger: logger)
    }
}
