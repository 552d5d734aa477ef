import Foundation
import Logging
import PostgresNIO
import ServiceKit
import ServiceKitHTTP

/// Databases for tests, on the throwaway cluster `make test` starts.
///
/// `make test` exports `STUDYSTACK_TEST_DATABASE_URL` (a superuser URL of that cluster). Each
/// test gets its own freshly created database, dropped afterwards, so tests run in parallel
/// without seeing each other's rows.
public enum TestDatabase {
    public static let environmentVariable = "STUDYSTACK_TEST_DATABASE_URL"

    public struct MissingCluster: Error, CustomStringConvertible {
        public var description: String {
            "\(TestDatabase.environmentVariable) is not set: run the tests with `make test`, which starts a throwaway PostgreSQL cluster"
        }
    }

    /// A cluster that takes the shared one's place for a task and what it starts
    /// (`PrivateCluster.run` sets it).
    @TaskLocal public static var clusterOverride: String?

    /// The superuser URL of the test cluster.
    public static func adminURL() throws -> String {
        if let clusterOverride { return clusterOverride }
        guard let url = ProcessInfo.processInfo.environment[environmentVariable], !url.isEmpty else {
            throw MissingCluster()
        }
        return url
    }

    /// The URL of `database` on the test cluster.
    public static func url(for database: String, host: String? = nil, port: Int? = nil) throws -> String {
        var components = URLComponents(string: try adminURL())!
        components.path = "/" + database
        if let host { components.host = host }
        if let port { components.port = port }
        return components.string!
    }

    /// Creates a database, runs `body` with its URL, and drops the database afterwards.
    public static func withFreshDatabase<T>(_ body: (_ url: String) async throws -> T) async throws -> T {
        let name = "test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        _ = try await withAdminClient { client, logger in
            try await client.query("CREATE DATABASE \(unescaped: name)", logger: logger)
        }
        let result: T
        do {
            result = try await body(try url(for: name))
        } catch {
            try? await drop(name)
            throw error
        }
        try? await drop(name)
        return result
    }

    /// The login the response service's participant queries run as (`QUERY_DATABASE_URL`).
    public static let queryReaderRole = "studystack_query_reader"

    /// The role researchers' queries switch to, which the reader is a member of.
    public static let queryResearcherRole = "studystack_query_reader_researcher"

    /// `url` with the participant-query role as its user; the role, and the researcher role it is
    /// a member of, are created once per cluster.
    public static func queryReaderURL(_ url: String) async throws -> String {
        _ = try await withAdminClient { client, logger in
            // Tests run in parallel: the lock makes one creation at a time, and the next sees it.
            try await client.query(
                """
                DO $$ BEGIN
                    PERFORM pg_advisory_xact_lock(hashtext('studystack test query roles'));
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'studystack_query_reader') THEN
                        CREATE ROLE studystack_query_reader LOGIN NOINHERIT;
                    END IF;
                    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'studystack_query_reader_researcher') THEN
                        CREATE ROLE studystack_query_reader_researcher NOLOGIN;
                    END IF;
                    IF NOT pg_has_role('studystack_query_reader', 'studystack_query_reader_researcher', 'MEMBER') THEN
                        GRANT studystack_query_reader_researcher TO studystack_query_reader;
                    END IF;
                END $$
                """, logger: logger)
        }
        var components = URLComponents(string: url)!
        components.user = queryReaderRole
        components.password = nil
        return components.string!
    }

    /// Makes `database` refuse new connections and closes the open ones, or accept them again:
    /// an outage of one database that other tests on the cluster do not notice.
    public static func setAcceptingConnections(_ accepting: Bool, database: String) async throws {
        try await withAdminClient { client, logger in
            try await client.query(
                "ALTER DATABASE \(unescaped: database) WITH ALLOW_CONNECTIONS \(unescaped: accepting ? "true" : "false")",
                logger: logger)
            if !accepting {
                try await client.query(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = \(database)", logger: logger)
            }
        }
    }

    private static func drop(_ name: String) async throws {
        _ = try await withAdminClient { client, logger in
            try await client.query("DROP DATABASE IF EXISTS \(unescaped: name) WITH (FORCE)", logger: logger)
        }
    }

    /// Runs `body` with a running client connected as superuser to the cluster's `postgres` database.
    public static func withAdminClient<T: Sendable>(
        _ body: @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws -> T {
        try await withClient(url: try adminURL(), body)
    }

    /// Runs `body` with a running `PostgresClient` for `url`.
    public static func withClient<T: Sendable>(
        url: String, _ body: @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws -> T {
        let settings = try DatabaseSettings(url: url, setting: Setting("database.url"))
        let client = PostgresClient(configuration: settings.clientConfiguration(applicationName: "studystack-tests"))
        let logger = Logger(label: "test-database")
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client, logger)
        }
    }
}
