import Foundation
import ServiceKit

/// A MariaDB server (Debian's mariadb-server) of its own, in a fresh data folder, on a free
/// loopback port: the MySQL a MyStudies 2.x deployment keeps its participants in. Statements are
/// run through Debian's `mariadb` client as the server's root over its socket, as an operator
/// runs a release's scripts; the code under test connects over TCP as a reader that may only
/// `SELECT`. As root, the server runs as the `mysql` OS user (the package creates it).
public final class MariaDBProcess: Sendable {
    public let port: Int
    public let readerUser = "studystack_reader"
    public let readerPassword: String
    private let process: ChildProcess
    private let folder: URL

    public var socket: String { folder.appendingPathComponent("mysqld.sock").path }

    public static func start() async throws -> MariaDBProcess {
        guard let server = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"].first(where: FileManager.default.isExecutableFile) else {
            throw TestServerError(description: "mariadbd is not installed (Debian's package mariadb-server)")
        }
        let port = try SMTPTestServer.freePort()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mariadb-\(UUID().uuidString)")
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        let asRoot = getuid() == 0
        if asRoot {
            try await ChildProcess.runInTask("/bin/chown", ["-R", "mysql:mysql", folder.path])
        }
        let owner = asRoot ? ["--user=mysql"] : []
        // No name lookups: the script otherwise resolves the machine's host name, which a CI
        // container may not be able to; the accounts are for the socket and 127.0.0.1 only.
        let install = [
            "--no-defaults", "--datadir=\(data.path)", "--auth-root-authentication-method=normal", "--skip-test-db",
            "--skip-name-resolve",
        ]
        do {
            try await ChildProcess.runInTask("mariadb-install-db", install + owner, timeout: .seconds(180))
        } catch {
            // Once more in an empty folder, so that a machine's passing trouble does not end the
            // test, with the first failure's own words in the log for whoever reads it.
            FileHandle.standardError.write(Data("mariadb-install-db failed once, trying again: \(error)\n".utf8))
            try? FileManager.default.removeItem(at: data)
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            if asRoot { try await ChildProcess.runInTask("/bin/chown", ["-R", "mysql:mysql", folder.path]) }
            try await ChildProcess.runInTask("mariadb-install-db", install + owner, timeout: .seconds(180))
        }
        let process = try ChildProcess.spawn(
            server,
            [
                "--no-defaults", "--datadir=\(data.path)", "--port=\(port)", "--bind-address=127.0.0.1",
                "--socket=\(folder.appendingPathComponent("mysqld.sock").path)", "--pid-file=\(folder.appendingPathComponent("mysqld.pid").path)",
                "--log-error=\(folder.appendingPathComponent("error.log").path)", "--skip-log-bin", "--skip-name-resolve", "--innodb-buffer-pool-size=64M",
                "--max-allowed-packet=64M",
            ] + owner,
            error: .null)
        let mariadb = MariaDBProcess(port: port, process: process, folder: folder, readerPassword: "r-\(UUID().uuidString)")
        try await eventually("mariadbd listening on \(port)", within: .seconds(60)) { () -> Bool? in
            guard process.isRunning else { throw TestServerError(description: "mariadbd exited: \(mariadb.logTail())") }
            return SMTPTestServer.accepts(port: port) ? true : nil
        }
        try await mariadb.execute(
            """
            CREATE USER '\(mariadb.readerUser)'@'127.0.0.1' IDENTIFIED BY '\(mariadb.readerPassword)';
            GRANT SELECT ON *.* TO '\(mariadb.readerUser)'@'127.0.0.1';
            """)
        return mariadb
    }

    private init(port: Int, process: ChildProcess, folder: URL, readerPassword: String) {
        self.port = port
        self.process = process
        self.folder = folder
        self.readerPassword = readerPassword
    }

    /// Runs `sql` (any number of statements, as a script file holds them) as root, in `database`
    /// when given. Throws with what the client printed when a statement fails.
    public func execute(_ sql: String, database: String? = nil) async throws {
        try await ChildProcess.runInTask(
            "mariadb", ["--no-defaults", "--socket=\(socket)", "--user=root", "--batch"] + (database.map { [$0] } ?? []),
            input: Data(sql.utf8), timeout: .seconds(300))
    }

    /// What `query` prints, tab-separated rows without the header.
    public func query(_ query: String, database: String? = nil) async throws -> [[String]] {
        let output = try await ChildProcess.runInTask(
            "mariadb", ["--no-defaults", "--socket=\(socket)", "--user=root", "--batch", "--skip-column-names"] + (database.map { [$0] } ?? []),
            input: Data(query.utf8), timeout: .seconds(300))
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    public func logTail() -> String {
        let text = (try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        return String(text.suffix(2000))
    }

    /// SIGTERM; SIGKILL if it has not ended within 30 s.
    public func stop() {
        process.stop()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
