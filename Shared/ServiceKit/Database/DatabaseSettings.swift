import Foundation
import PostgresNIO

/// Where a service's database is, parsed from a libpq-style URL:
/// `postgres://user:password@host:port/database?sslmode=disable|prefer|require`.
///
/// A `host` query parameter naming a directory selects a Unix socket in that directory, as libpq
/// does (`postgres://user@/db?host=/var/run/postgresql`).
public struct DatabaseSettings: Sendable {
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public var host: String?
    public var port: Int
    public var unixSocketDirectory: String?
    public var username: String
    public var password: String?
    public var database: String
    public var tlsMode: TLSMode
    public var maxConnections: Int = 20
    /// How the database is reached: directly or through a pooler in session mode, or through a
    /// pooler in transaction mode (PgBouncer's `pool_mode = transaction`), where consecutive
    /// statements may run on different server connections (`DATABASE_POOLING`).
    public var pooling: Pooling = .session

    public enum Pooling: String, Sendable, CaseIterable {
        case session
        /// No named prepared statements (they would be lost with their server connection) and no
        /// `LISTEN` (its connection goes back to the pool): queues poll, caches expire.
        case transaction
    }

    public init(url raw: String, setting: Setting) throws(ConfigurationError) {
        func fail(_ problem: String) -> ConfigurationError {
            // Never echo the URL: it may hold a password.
            ConfigurationError(setting, problem)
        }
        guard let components = URLComponents(string: raw),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw fail("must be a URL of the form postgres://user:password@host:port/database")
        }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })

        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw fail("names no user (postgres://USER@host/database)")
        }
        username = user
        password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }

        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.isEmpty, !path.contains("/") else {
            throw fail("names no database (postgres://user@host/DATABASE)")
        }
        database = path

        port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw fail("has an invalid port") }

        if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
            unixSocketDirectory = socketDirectory
            host = nil
        } else if let host = components.host, !host.isEmpty {
            self.host = host
            unixSocketDirectory = nil
        } else {
            throw fail("names no host (postgres://user@HOST/database, or ?host=/socket/directory)")
        }

        if let mode = query["sslmode"] {
            guard let parsed = TLSMode(rawValue: mode) else {
                throw fail("sslmode must be disable, prefer or require, got \"\(mode)\"")
            }
            tlsMode = parsed
        } else {
            tlsMode = .prefer
        }
    }

    /// The postgres-nio configuration for these settings; `applicationName` identifies this
    /// process's connections in `pg_stat_activity` (the pool gauges read it).
    public func clientConfiguration(applicationName: String) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let unixSocketDirectory {
            configuration = .init(
                unixSocketPath: "\(unixSocketDirectory)/.s.PGSQL.\(port)",
                username: username, password: password, database: database)
        } else {
            let tls: PostgresClient.Configuration.TLS =
                switch tlsMode {
                case .disable: .disable
                case .prefer: .prefer(.makeClientConfiguration())
                case .require: .require(.makeClientConfiguration())
                }
            configuration = .init(
                host: host ?? "127.0.0.1", port: port, username: username, password: password, database: database,
                tls: tls)
        }
        configuration.options.maximumConnections = maxConnections
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        return configuration
    }
}
