import Foundation
import ServiceKit

/// A PostgreSQL cluster of one test's own, in a temporary directory on a free port, for a test
/// that must do to PostgreSQL what it cannot do to the cluster every other test shares: restart
/// it mid-work. While `run`'s body runs, `TestDatabase` (and so `withFreshDatabase`) uses it.
///
/// The server programs come from `STUDYSTACK_TEST_PG_BINDIR` (`make test` sets it) or Debian's
/// `/usr/lib/postgresql/<version>/bin`. PostgreSQL refuses to run as root, so as root they run as
/// the `postgres` OS user. Commits are synchronous (unlike the shared cluster): a test that
/// restarts with `-m immediate` must not lose a commit it was told about.
public final class PrivateCluster: Sendable {
    public let port: Int
    let directory: URL
    let bindir: URL

    public var adminURL: String { "postgres://postgres@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Starts a cluster, runs `body` with it as the tests' cluster, and removes it afterwards.
    public static func run<T: Sendable>(_ body: @Sendable (PrivateCluster) async throws -> T) async throws -> T {
        let cluster = try PrivateCluster()
        defer { cluster.destroy() }
        try cluster.initialise()
        try cluster.start()
        return try await TestDatabase.$clusterOverride.withValue(cluster.adminURL) { try await body(cluster) }
    }

    private init() throws {
        bindir = try Self.findBindir()
        port = try SMTPTestServer.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Stops the server as a crash would (`-m immediate`: no checkpoint, every connection cut)
    /// and starts it again, as an operator's `pg_ctl restart -m immediate` does.
    public func restartImmediately() throws {
        try pgCtl(["restart", "-m", "immediate", "-w", "-t", "60", "-l",
                   directory.appendingPathComponent("postgres.log").path, "-o", serverOptions])
    }

    /// Stops the server as a crash would, and leaves it stopped until `start`: for a test that
    /// must see the services notice the outage before PostgreSQL returns.
    public func stopImmediately() throws {
        try pgCtl(["stop", "-m", "immediate", "-w", "-t", "60"])
    }

    public func start() throws {
        try pgCtl(["start", "-w", "-t", "60", "-l", directory.appendingPathComponent("postgres.log").path, "-o", serverOptions])
    }

    /// The server's log, for a failing test to show.
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("postgres.log"), encoding: .utf8)) ?? ""
    }

    private var dataDirectory: String { directory.appendingPathComponent("data").path }

    private var serverOptions: String {
        "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off"
    }

    private func initialise() throws {
        if Self.isRoot {
            try ChildProcess.run("/bin/chown", ["-R", "postgres:postgres", directory.path])
        }
        try execute("initdb", ["-D", dataDirectory, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"])
    }

    private func pgCtl(_ arguments: [String]) throws {
        try execute("pg_ctl", ["-D", dataDirectory] + arguments)
    }

    private func destroy() {
        try? pgCtl(["stop", "-m", "immediate"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a server program to its end (pg_ctl waits for the server; `-t 60` bounds that). The
    /// server pg_ctl starts lives on; `ChildProcess` waits for pg_ctl itself, not for the end of
    /// its output, and gives the server none of this process's descriptors.
    private func execute(_ program: String, _ arguments: [String]) throws {
        let path = bindir.appendingPathComponent(program).path
        if Self.isRoot {
            try ChildProcess.run("/usr/sbin/runuser", ["-u", "postgres", "--", path] + arguments, timeout: .seconds(120), sharedFolder: true)
        } else {
            try ChildProcess.run(path, arguments, timeout: .seconds(120))
        }
    }

    private static var isRoot: Bool { getuid() == 0 }

    private static func findBindir() throws -> URL {
        if let configured = ProcessInfo.processInfo.environment["STUDYSTACK_TEST_PG_BINDIR"], !configured.isEmpty {
            return URL(fileURLWithPath: configured)
        }
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        for version in versions.sorted(by: { $0.compare($1, options: .numeric) == .orderedDescending }) {
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("pg_ctl").path) { return bin }
        }
        throw TestServerError(
            description: "no PostgreSQL server programs: set STUDYSTACK_TEST_PG_BINDIR or install Debian's postgresql")
    }
}
