import Foundation

/// Starts one of the repository's Python test servers (`scripts/*-server.py`), which listen on a
/// free port of 127.0.0.1, write it to the port file they are given as their first argument, and
/// end when their standard input closes. Returns the process and its port, or throws with what
/// the server wrote to standard error when it did not start within `timeout`.
enum ScriptServer {
    static func start(
        python: String, script: String, arguments: [String], in directory: URL, name: String, timeout: Duration = .seconds(60)
    ) throws -> (process: ChildProcess, port: Int) {
        let portFile = directory.appendingPathComponent("port")
        let errors = directory.appendingPathComponent("server.err")
        let process = try ChildProcess.spawn(
            python, [SMTPTestServer.repositoryRoot.appendingPathComponent("scripts/\(script)").path, portFile.path] + arguments,
            input: .pipe, output: .null, error: .file(errors))
        let deadline = ContinuousClock.now + timeout
        while true {
            if let port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap({ Int($0) }) { return (process, port) }
            guard process.isRunning && ContinuousClock.now < deadline else {
                let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                process.kill()
                throw TestServerError(description: "the \(name) did not start: \(said.suffix(2000))")
            }
            usleep(20_000)
        }
    }
}
