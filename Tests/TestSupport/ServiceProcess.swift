import AsyncHTTPClient
import Foundation
import NIOCore
import ServiceKit
import StudyModels

/// One of the real service executables (`.build/debug/<name>`, built by `swift build
/// --build-tests`), started on a free port with the settings given, for tests that need a real
/// process: one that can be killed with SIGKILL mid-work and started again.
public final class ServiceProcess: Sendable {
    public let name: String
    public let port: Int
    public let logFile: URL
    private let process: ChildProcess

    /// The package's root, from this file's place in it.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Starts `name` with `environment` (plus `HTTP_PORT`: `port`, or a free one) and waits until
    /// `/readyz` answers 200. Services that call each other are given their ports up front.
    public static func start(
        _ name: String, environment: [String: String], port: Int? = nil, timeout: Duration = .seconds(60)
    ) async throws -> ServiceProcess {
        let executable = packageRoot.appendingPathComponent(".build/debug/\(name)")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw TestServerError(description: "\(executable.path) is not built (swift build --build-tests)")
        }
        let port = try port ?? SMTPTestServer.freePort()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(port)-\(UUID().uuidString).log")
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("DATABASE") }
        env.merge(environment) { $1 }
        env["HTTP_PORT"] = String(port)
        env["HTTP_HOST"] = "127.0.0.1"
        let process = try ChildProcess.spawn(executable.path, [], environment: env, output: .file(log), error: .file(log))
        let service = ServiceProcess(name: name, port: port, logFile: log, process: process)
        try await service.waitUntilReady(timeout: timeout)
        return service
    }

    private init(name: String, port: Int, logFile: URL, process: ChildProcess) {
        self.name = name
        self.port = port
        self.logFile = logFile
        self.process = process
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public var isRunning: Bool { process.isRunning }

    /// The process's resident memory now and at its highest since it started (`VmRSS` and
    /// `VmHWM` of /proc/<pid>/status), in bytes.
    public func residentMemory() throws -> (now: Int, peak: Int) {
        let status = try String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8)
        func kilobytes(_ field: String) throws -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("\(field):") }),
                let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
            else { throw TestServerError(description: "no \(field) in /proc/\(process.pid)/status") }
            return value * 1024
        }
        return (try kilobytes("VmRSS"), try kilobytes("VmHWM"))
    }

    private func waitUntilReady(timeout: Duration) async throws {
        do {
            try await eventually("\(name) answering /readyz with 200", within: timeout) { () async throws -> UInt? in
                guard process.isRunning else {
                    let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
                    throw TestServerError(description: "\(name) exited: \(log.suffix(2000))")
                }
                var request = HTTPClientRequest(url: "\(baseURL)/readyz")
                request.method = .GET
                return try? await HTTPClient.shared.execute(request, timeout: .seconds(2)).status.code
            } until: { $0 == 200 }
        } catch {
            await kill()
            throw error
        }
    }

    /// The end of what the process wrote, for a failing test to show.
    public func logTail(_ characters: Int = 4000) -> String {
        String(((try? String(contentsOf: logFile, encoding: .utf8)) ?? "").suffix(characters))
    }

    /// SIGKILL: no graceful shutdown, no chance to finish or roll back anything itself.
    public func kill() {
        process.kill()
    }

    /// SIGTERM, and waits up to `grace` for the process to exit; past it, SIGKILL. Returns
    /// whether it exited by itself: a service that does not end on SIGTERM has a worker that
    /// ignores shutdown, which a test should report.
    @discardableResult
    public func stop(grace: Duration = .seconds(30)) -> Bool {
        process.stop(grace: grace)
    }

    /// `kill()` for a caller in a task: waiting for the kernel does not hold a thread of the
    /// cooperative pool.
    public func kill() async {
        await process.kill()
    }

    /// `stop(grace:)` for a caller in a task: the graceful shutdown it waits for may need a
    /// server of this test process (a fake APNs finishing a push), which needs the pool.
    @discardableResult
    public func stop(grace: Duration = .seconds(30)) async -> Bool {
        await process.stop(grace: grace)
    }

    deinit {
        process.kill()
        try? FileManager.default.removeItem(at: logFile)
    }
}
