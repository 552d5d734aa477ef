import Foundation

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
            try Self.execute(URL(fileURLWithPath: "/bin/chown"), ["-R", "postgres:postgres", directory.path])
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

    private func execute(_ program: String, _ arguments: [String]) throws {
        let path = bindir.appendingPathComponent(program)
        if Self.isRoot {
            try Self.execute(URL(fileURLWithPath: "/usr/sbin/runuser"), ["-u", "postgres", "--", path.path] + arguments)
        } else {
            try Self.execute(path, arguments)
        }
    }

    /// Runs a program to its end, its output to a file. Not through `Process`: `pg_ctl start`
    /// leaves a daemon behind, and `Process.waitUntilExit` was seen never to return for it (the
    /// child stayed a zombie), so the child is spawned and reaped here directly.
    private static func execute(_ executable: URL, _ arguments: [String]) throws {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("pg-ctl-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw TestServerError(description: "\(executable.path) could not be started (errno \(spawned))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // Exited normally (low 7 bits zero) with status 0.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
            throw TestServerError(
                description: "\(executable.lastPathComponent) \(arguments.joined(separator: " ")) failed: \(text)")
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
