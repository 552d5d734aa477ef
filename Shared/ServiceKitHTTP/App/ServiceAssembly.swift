import Configuration
import Logging
import ServiceKit

/// A service's assembly point: its descriptor, and how it builds its application from parsed
/// settings. What every service builds the same way (from a reader alone, as tests do; as the
/// executable's entry point) comes with it.
public protocol ServiceAssembly {
    static var descriptor: ServiceDescriptor { get }

    static func buildApplication(
        reader: ConfigReader, settings: ServiceSettings, logger: Logger, routeCatalog: RouteCatalog?
    ) throws -> ServiceApplication
}

extension ServiceAssembly {
    /// Builds the application from a configuration reader (what tests do).
    public static func buildApplication(
        reader: ConfigReader, logger: Logger, routeCatalog: RouteCatalog? = nil
    ) throws -> ServiceApplication {
        try buildApplication(
            reader: reader, settings: ServiceSettings(reader: reader, descriptor: descriptor), logger: logger,
            routeCatalog: routeCatalog)
    }

    /// The executable's entry point: reads the configuration and runs the service until it is
    /// told to stop (`ServiceMain.run`).
    public static func main() async -> Never {
        await ServiceMain.run(descriptor: descriptor) { reader, settings, logger in
            try buildApplication(reader: reader, settings: settings, logger: logger, routeCatalog: nil)
        }
    }
}
