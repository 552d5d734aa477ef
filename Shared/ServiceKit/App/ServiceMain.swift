import Configuration
import Foundation
import Hummingbird
import Logging

/// The entry point every service executable calls.
public enum ServiceMain {
    /// Reads configuration (flags first, then environment, then built-in local defaults), sets up
    /// logging, builds the application and runs it until SIGTERM or SIGINT. A bad setting stops
    /// the process with one line naming it; so does a fatal start-up error.
    public static func run(
        descriptor: ServiceDescriptor,
        build: (ConfigReader, ServiceSettings, Logger) throws -> ServiceApplication
    ) async -> Never {
        let reader = ConfigReader(providers: [CommandLineArgumentsProvider(), EnvironmentVariablesProvider()])
        let settings: ServiceSettings
        do {
            settings = try ServiceSettings(reader: reader, descriptor: descriptor)
        } catch {
            fail("\(descriptor.name.rawValue): \(error)", exitCode: 78)  // EX_CONFIG
        }
        LoggingSetup.bootstrap(format: settings.logFormat, level: settings.logLevel.level)
        let logger = Logger(label: "studystack.\(descriptor.name.rawValue)")
        let app: ServiceApplication
        do {
            app = try build(reader, settings, logger)
        } catch let error as ConfigurationError {
            fail("\(descriptor.name.rawValue): \(error)", exitCode: 78)
        } catch {
            fail("\(descriptor.name.rawValue): fatal: \(error)", exitCode: 1)
        }
        do {
            logger.info(
                "starting", metadata: ["address": "\(settings.host):\(settings.port)", "database": "\(settings.database.database)"])
            try await app.runService()
            logger.info("stopped")
            exit(0)
        } catch {
            logger.critical("stopping after a fatal error", metadata: ["error": "\(error)"])
            fail("\(descriptor.name.rawValue): fatal: \(error)", exitCode: 1)
        }
    }

    private static func fail(_ line: String, exitCode: Int32) -> Never {
        FileHandle.standardError.write(Data((line + "\n").utf8))
        exit(exitCode)
    }
}
