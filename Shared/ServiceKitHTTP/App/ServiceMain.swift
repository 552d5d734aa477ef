import Configuration
import Foundation
import Hummingbird
import Logging
import ServiceKit
import ServiceLifecycle

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
            try await ServiceGroup(configuration: groupConfiguration(app, logger: logger)).run()
            logger.info("stopped")
            exit(0)
        } catch {
            logger.critical("stopping after a fatal error", metadata: ["error": "\(error)"])
            fail("\(descriptor.name.rawValue): fatal: \(error)", exitCode: 1)
        }
    }

    /// SIGTERM or SIGINT start a graceful shutdown: the server stops taking requests, and the
    /// workers finish their round and stop. It is bounded: after 15 s the rest is cancelled, and
    /// what still has not ended 10 s later (a database call that never returns after PostgreSQL
    /// went away under it) ends the process with a fatal error, so that an orchestrator's restart
    /// is never held up by a hung task.
    static func groupConfiguration(_ app: ServiceApplication, logger: Logger) -> ServiceGroupConfiguration {
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(15)
        configuration.maximumCancellationDuration = .seconds(10)
        return configuration
    }

    private static func fail(_ line: String, exitCode: Int32) -> Never {
        FileHandle.standardError.write(Data((line + "\n").utf8))
        exit(exitCode)
    }
}
