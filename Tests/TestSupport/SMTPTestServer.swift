import Foundation
import NIOCore
import NIOPosix
import ServiceKit
import Synchronization

/// A real SMTP server for tests (`scripts/test-smtp-server.py`, aiosmtpd): STARTTLS with a
/// throwaway certificate authority made by openssl for the test, AUTH required, each accepted
/// message saved as JSON. `make test` installs aiosmtpd and sets `STUDYSTACK_TEST_PYTHON`.
public final class SMTPTestServer: Sendable {
    public struct Received: Decodable, Sendable {
        public var from: String
        public var to: [String]
        public var data: String
        public var tls: Bool
        public var authenticated: Bool
    }

    public let port: Int
    public let directory: URL
    public let certificateFile: String
    public let username = "mailer"
    public let password = "smtp-Passw0rd"
    /// The server, while it runs: closing its standard input stops it.
    private let process = Mutex<ChildProcess?>(nil)

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Prepares a server on a free port (not yet listening: `start()` does that).
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("inbox"), withIntermediateDirectories: true)
        certificateFile = directory.appendingPathComponent("cert.pem").path
        port = try Self.freePort()
        try ChildProcess.run("openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost", "-keyout", directory.appendingPathComponent("key.pem").path,
            "-out", certificateFile,
        ])
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    public func start() throws {
        let python = ProcessInfo.processInfo.environment["STUDYSTACK_TEST_PYTHON"]
            ?? Self.repositoryRoot.appendingPathComponent(".build/tools-venv/bin/python").path
        let ready = directory.appendingPathComponent("server.out")
        let process = try ChildProcess.spawn(
            python,
            [
                Self.repositoryRoot.appendingPathComponent("scripts/test-smtp-server.py").path, String(port), certificateFile,
                directory.appendingPathComponent("key.pem").path, username, password, directory.appendingPathComponent("inbox").path,
            ], input: .pipe, output: .file(ready), error: .null)
        self.process.withLock { $0 = process }
        // It writes "ready" once it listens.
        let deadline = ContinuousClock.now + .seconds(30)
        while !((try? String(contentsOf: ready, encoding: .utf8)) ?? "").contains("ready") {
            guard process.isRunning, ContinuousClock.now < deadline else {
                stop()
                throw TestServerError(description: "the SMTP test server did not start (is aiosmtpd installed? run make test)")
            }
            usleep(20_000)
        }
    }

    /// Closes its input, which ends it; a server still there five seconds later is killed.
    public func stop() {
        guard let process = process.withLock({ $0.take() }) else { return }
        process.closeInput()
        if process.wait(within: .seconds(5)) == nil { process.kill() }
    }

    /// Messages received so far, oldest first.
    public func received() throws -> [Received] {
        let inbox = directory.appendingPathComponent("inbox")
        return try FileManager.default.contentsOfDirectory(atPath: inbox.path).filter { $0.hasSuffix(".json") }.sorted()
            .map { try JSONDecoder().decode(Received.self, from: Data(contentsOf: inbox.appendingPathComponent($0))) }
    }

    /// Waits until at least `count` messages arrived.
    public func waitForMessages(_ count: Int, timeout: Duration = .seconds(20)) async throws -> [Received] {
        try await eventually("\(count) messages at the SMTP server", within: timeout) { try received() } until: { $0.count >= count }
    }

    public static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        return channel.localAddress?.port ?? 0
    }

    /// Whether something accepts TCP connections on `port` of 127.0.0.1.
    public static func accepts(port: Int) -> Bool {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

public struct TestServerError: Error, CustomStringConvertible {
    public var description: String

    public init(description: String) {
        self.description = description
    }
}
