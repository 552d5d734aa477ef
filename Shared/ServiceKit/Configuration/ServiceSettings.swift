import Configuration
import Foundation
import Logging

/// What distinguishes one StudyStack service from another at start-up.
public struct ServiceDescriptor: Sendable {
    public let name: ServiceName
    /// Port used when `HTTP_PORT` is not set.
    public let defaultPort: Int
    /// Database name used when `DATABASE_URL` is not set.
    public let defaultDatabase: String
    /// The service's own migrations; ServiceKit's run before them.
    public let migrations: [Migration]

    public init(name: ServiceName, defaultPort: Int, defaultDatabase: String, migrations: [Migration]) {
        self.name = name
        self.defaultPort = defaultPort
        self.defaultDatabase = defaultDatabase
        self.migrations = migrations
    }

    /// ServiceKit's migrations followed by the service's own, in the order they are applied.
    public var allMigrations: [Migration] { ServiceKitMigrations.all + migrations }
}

/// Everything a service reads from its configuration, parsed and validated at start.
public struct ServiceSettings: Sendable {
    public enum LogFormat: String, Sendable, CaseIterable {
        case text
        case json
    }

    public enum LogLevel: String, Sendable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical

        public var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .info }
    }

    /// The settings every service understands. `docs/configuration.md` lists them.
    public enum Keys {
        public static let httpHost = Setting("http.host")
        public static let httpPort = Setting("http.port")
        public static let httpMaxBodySize = Setting("http.maxBodySize")
        public static let databaseURL = Setting("database.url", secret: true)
        public static let databaseMaxConnections = Setting("database.maxConnections")
        public static let databasePooling = Setting("database.pooling")
        public static let logLevel = Setting("log.level")
        public static let logFormat = Setting("log.format")
        public static let internalSigningKey = Setting("internal.signingKey", secret: true)
        public static let internalCallerKeys = Setting("internal.callerKeys", secret: true)
        public static let studyMetadataURL = Setting("studyMetadata.url")
        public static let registrationURL = Setting("registration.url")
        public static let responseURL = Setting("response.url")
        public static let rateLimit = Setting("rateLimit.perMinute")
        public static let trustedProxies = Setting("rateLimit.trustedProxies")
    }

    /// Local port of the StudyStack PostgreSQL cluster that `make run` creates.
    public static let localDatabasePort = 55432

    public var service: ServiceName
    public var host: String
    public var port: Int
    public var maxBodySize: Int
    public var database: DatabaseSettings
    public var logLevel: LogLevel
    public var logFormat: LogFormat
    public var internalKeys: InternalKeys
    public var peers: [ServiceName: URL]
    /// Requests per minute one client address may make to a rate-limited public route.
    public var rateLimitPerMinute: Int
    /// How a request's client address is told behind trusted proxies.
    public var clientAddresses: ClientAddressResolver

    /// Reads and validates every setting; the first problem is thrown with the setting's name.
    public init(reader: ConfigReader, descriptor: ServiceDescriptor) throws(ConfigurationError) {
        let settings = SettingsReader(reader)
        service = descriptor.name
        host = settings.text(Keys.httpHost) ?? "127.0.0.1"
        port = try settings.integer(Keys.httpPort, default: descriptor.defaultPort, in: 0...65535)
        maxBodySize = try settings.integer(Keys.httpMaxBodySize, default: 8 * 1024 * 1024, in: 1024...(1 << 30))
        let defaultURL = "postgres://studystack@127.0.0.1:\(Self.localDatabasePort)/\(descriptor.defaultDatabase)?sslmode=disable"
        database = try DatabaseSettings(
            url: settings.text(Keys.databaseURL) ?? defaultURL,
            setting: Keys.databaseURL
        )
        database.maxConnections = try settings.integer(
            Keys.databaseMaxConnections, default: database.maxConnections, in: 1...1000)
        database.pooling = try settings.choice(Keys.databasePooling, default: .session)
        logLevel = try settings.choice(Keys.logLevel, default: .info)
        logFormat = try settings.choice(Keys.logFormat, default: .text)
        internalKeys = try InternalKeys(
            ownName: descriptor.name,
            signingKey: settings.requiredText(Keys.internalSigningKey),
            callerKeys: settings.text(Keys.internalCallerKeys)
        )
        var peers: [ServiceName: URL] = [:]
        for (name, setting, port) in [
            (ServiceName.studyMetadata, Keys.studyMetadataURL, 8081),
            (.registration, Keys.registrationURL, 8082),
            (.response, Keys.responseURL, 8083),
        ] {
            peers[name] = try settings.httpURL(setting, default: URL(string: "http://127.0.0.1:\(port)")!)
        }
        self.peers = peers
        rateLimitPerMinute = try settings.integer(Keys.rateLimit, default: 30, in: 1...100_000)
        switch ClientAddressResolver.parse(settings.text(Keys.trustedProxies) ?? "") {
        case .success(let resolver): clientAddresses = resolver
        case .failure(let error):
            throw ConfigurationError(Keys.trustedProxies, "\"\(error.entry)\" is not an IP address or CIDR range")
        }
    }
}
