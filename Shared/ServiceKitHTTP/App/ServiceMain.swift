import Configuration
import Foundation
import Hummingbird
import Logging
import ServiceKit
import ServiceLifecycle
import UnixSignals

/// The entry point every service executable calls.
public enum ServiceMain {
    /// Reads configuration (flags first, then environment, then built-in local defaults), sets up
    /// logging, builds the application and runs it until SIGTERM or SIGINT. A bad setting stops
    /// the process with one line naming it; so does a fatal start-up error.
    public static func run(
        descriptor: ServiceDescriptor,
        build: (ConfigReader, ServiceSettings, Logger) throws -> ServiceApplication
    ) async -> Never {
        await run(name: descriptor.name.rawValue, settings: { reader throws(ConfigurationError) in
            try ServiceSettings(reader: reader, descriptor: descriptor)
        }, build: build)
    }

    /// The same for any process: `settings` parses what it reads (a process without a database,
    /// such as the console, has settings of its own).
    public static func run<Settings: ProcessSettings>(
        name: String,
        settings parse: (ConfigReader) throws(ConfigurationError) -> Settings,
        build: (ConfigReader, Settings, Logger) throws -> ServiceApplication
    ) async -> Never {
        let reader = ConfigReader(providers: [CommandLineArgumentsProvider(), EnvironmentVariablesProvider()])
        let settings: Settings
        do {
            settings = try parse(reader)
        } catch {
            fail("\(name): \(error)", exitCode: 78)  // EX_CONFIG
        }
        LoggingSetup.bootstrap(format: settings.logFormat, level: settings.logLevel.level)
        let logger = Logger(label: "studystack.\(name)")
        let app: ServiceApplication
        do {
            app = try build(reader, settings, logger)
        } catch let error as ConfigurationError {
            fail("\(name): \(error)", exitCode: 78)
        } catch {
            fail("\(name): fatal: \(error)", exitCode: 1)
        }
        let watchdog = Task.detached { await exitIfStopping(takesLongerThan: shutdownLimit, logger: logger) }
        defer { watchdog.cancel() }
        do {
            logger.info(
                "starting",
                metadata: settings.startMetadata.merging(["address": "\(settings.host):\(settings.port)"]) { $1 })
            try await ServiceGroup(configuration: groupConfiguration(app, logger: logger)).run()
            logger.info("stopped")
            exit(0)
        } catch {
            logger.critical("stopping after a fatal error", metadata: ["error": "\(error)"])
            fail("\(name): fatal: \(error)", exitCode: 1)
        }
    }

    /// SIGTERM or SIGINT start a graceful shutdown: the server stops taking requests, and the
    /// workers finish their round and stop. After 15 s what is still running is cancelled.
    static func groupConfiguration(_ app: ServiceApplication, logger: Logger) -> ServiceGroupConfiguration {
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(15)
        return configuration
    }

    /// How long stopping may take in all, from the signal.
    static let shutdownLimit: Duration = .seconds(25)

    /// Stopping is bounded: what has not ended `limit` after the signal (a database call that
    /// never returns after PostgreSQL went away under it) ends the process with exit status 1 and
    /// a critical log line, so that an orchestrator's restart is never held up by a hung task.
    /// (ServiceGroup's own limit would end it with a crash and a backtrace, which can take minutes
    /// to write.)
    static func exitIfStopping(takesLongerThan limit: Duration, logger: Logger) async {
        for await signal in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
            logger.info("stopping", metadata: ["signal": "\(signal)"])
            do {
                try await Task.sleep(for: limit)
            } catch {
                return
            }
            logger.critical("still not stopped \(limit) after the signal; exiting", metadata: ["signal": "\(signal)"])
            fail("stopping took longer than \(limit); exiting", exitCode: 1)
        }
    }

    private static func fail(_ line: String, exitCode: Int32) -> Never {
        FileHandle.standardError.write(Data((line + "\n").utf8))
        exit(exitCode)
    }
}
