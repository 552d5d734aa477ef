import Foundation
import ServiceKit

/// PgBouncer (Debian's package) in transaction pooling mode, on a free port, in front of the test
/// cluster: what an operator puts between many replicas and PostgreSQL. Every client is passed
/// through as the cluster's own user (`auth_type = any` needs one), which the tests' URLs use
/// anyway. PgBouncer refuses to run as root, so as root it runs as `postgres`.
public final class PgBouncerProcess: Sendable {
    public let port: Int
    private let process: ChildProcess
    private let folder: URL

    public static func start(upstream url: String) async throws -> PgBouncerProcess {
        guard let components = URLComponents(string: url), let host = components.host, let upstreamPort = components.port,
            let user = components.user
        else { throw TestServerError(description: "cannot read the cluster's address from \(url)") }
        guard let binary = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].first(where: FileManager.default.isExecutableFile) else {
            throw TestServerError(description: "pgbouncer is not installed (Debian's package pgbouncer)")
        }
        let port = try SMTPTestServer.freePort()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pgbouncer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        let config = folder.appendingPathComponent("pgbouncer.ini")
        try """
            [databases]
            * = host=\(host) port=\(upstreamPort) user=\(user)
            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = any
            pool_mode = transaction
            max_client_conn = 2000
            default_pool_size = 30
            ignore_startup_parameters = extra_float_digits,options
            ; After PostgreSQL restarts, try logging in again after a second, not the default 15.
            server_login_retry = 1
            logfile = \(folder.path)/pgbouncer.log

            """.write(to: config, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config.path)
        let process = getuid() == 0
            ? try ChildProcess.spawn("/usr/sbin/runuser", ["-u", "postgres", "--", binary, config.path], error: .null)
            : try ChildProcess.spawn(binary, [config.path], error: .null)
        let bouncer = PgBouncerProcess(port: port, process: process, folder: folder)
        try await eventually("pgbouncer listening on \(port)", within: .seconds(15)) { () -> Bool? in
            guard process.isRunning else { throw TestServerError(description: "pgbouncer exited: \(bouncer.logTail())") }
            return SMTPTestServer.accepts(port: port) ? true : nil
        }
        return bouncer
    }

    private init(port: Int, process: ChildProcess, folder: URL) {
        self.port = port
        self.process = process
        self.folder = folder
    }

    /// `url` with its host and port replaced by this pooler's.
    public func route(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.host = "127.0.0.1"
        components.port = port
        return components.string ?? url
    }

    public func logTail() -> String {
        let text = (try? String(contentsOf: folder.appendingPathComponent("pgbouncer.log"), encoding: .utf8)) ?? ""
        return String(text.suffix(2000))
    }

    /// SIGTERM (runuser passes it on); SIGKILL if it has not ended within 30 s.
    public func stop() {
        process.stop()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
