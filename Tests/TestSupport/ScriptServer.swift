import AsyncHTTPClient
import Foundation
import JSONText
import ServiceKit
import Synchronization

/// One of the repository's Python test servers (`scripts/*-server.py`), running: each listens on a
/// free port of 127.0.0.1, writes it to the port file it is given as its first argument, and ends
/// when its standard input closes. It runs in a temporary folder of its own, which `arguments`
/// may fill first (the data it serves) and which goes with it.
final class ScriptServer: Sendable {
    let port: Int
    let directory: URL
    private let process: Mutex<ChildProcess?>

    /// Starts `script`, or throws with what it wrote to standard error when it did not start
    /// within `timeout`.
    init(
        python: String, script: String, name: String, timeout: Duration = .seconds(60), arguments: (URL) throws -> [String]
    ) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("studystack-\(script)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        let portFile = directory.appendingPathComponent("port")
        let errors = directory.appendingPathComponent("server.err")
        let process = try ChildProcess.spawn(
            python, [SMTPTestServer.repositoryRoot.appendingPathComponent("scripts/\(script)").path, portFile.path] + (try arguments(directory)),
            input: .pipe, output: .null, error: .file(errors))
        let deadline = ContinuousClock.now + timeout
        while true {
            if let port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap({ Int($0) }) {
                self.port = port
                break
            }
            guard process.isRunning && ContinuousClock.now < deadline else {
                let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                process.kill()
                try? FileManager.default.removeItem(at: directory)
                throw TestServerError(description: "the \(name) did not start: \(said.suffix(2000))")
            }
            usleep(20_000)
        }
        self.process = Mutex(process)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Closes its input, which ends it.
    func stop() {
        guard let process = process.withLock({ $0.take() }) else { return }
        process.closeInput()
        if process.wait(within: .seconds(5)) == nil { process.kill() }
    }

    /// The paths of the requests it was sent, in order, for a server that keeps them (`/_requests`).
    func requests() async throws -> [String] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/_requests"), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 16 << 20)
        let reply = try JSONValue.parse(body.readableBytesView, budget: .init(maxBytes: 16 << 20, maxNodes: 1_000_000))
        return reply["requests"]?.array?.compactMap(\.string) ?? []
    }
}
