import Foundation
import Synchronization

/// A program this process starts: a tool from Debian's packages (the console reads a PDF's text
/// with poppler's `pdftotext`), and in tests a service replica, nginx, PgBouncer, pg_ctl, a
/// Python script. Spawned with `posix_spawn` and reaped by its own pid with `waitpid`; every wait
/// has a deadline.
///
/// Not Foundation's `Process`: on Linux it learns that a child ended only when a socket the child
/// inherits is closed (swift-corelibs-foundation #4795), and that socket is created without
/// close-on-exec, so a program spawned elsewhere at the same moment (pg_ctl's server, which
/// lives on) can hold it and hide the exit for ever; `waitUntilExit` has no deadline, and one was
/// seen never to return. A `make test` in CI then hung for an hour instead of failing.
///
/// The child gets none of this process's descriptors beyond its standard three (it must not keep
/// a test server's socket or another child's pipe open), an empty signal mask and the default
/// handling of the signals tests send (a thread of Dispatch blocks most signals, and a child
/// inherits the mask of the thread that spawned it).
public final class ChildProcess: Sendable {
    /// Where a standard stream comes from or goes to.
    public enum Stream: Sendable {
        case null
        /// A file: read from for standard input; created or appended to for output.
        case file(URL)
        /// This process's own stream (a tool's complaints in the test log).
        case inherited
        /// Standard input only: a pipe this process holds open until `closeInput` (a server that
        /// stops when its input closes).
        case pipe
    }

    /// It could not start, failed, or ran out of time: what happened, with the end of what it
    /// wrote to standard error.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        /// Reaped by something else (no status to report).
        case unknown

        public var description: String {
            switch self {
            case .exited(let code): "exited with \(code)"
            case .signalled(let signal): "ended by signal \(signal)"
            case .unknown: "ended"
            }
        }
    }

    public let pid: pid_t
    /// The program and its arguments, for messages.
    public let command: String
    private let termination = Mutex<Termination?>(nil)
    private let inputPipe: Mutex<Int32?>

    private init(pid: pid_t, command: String, inputPipe: Int32?) {
        self.pid = pid
        self.command = command
        self.inputPipe = Mutex(inputPipe)
    }

    /// Starts `program` (a path, or a name looked up on PATH) with `arguments`; `environment`
    /// replaces this process's when given.
    public static func spawn(
        _ program: String, _ arguments: [String], environment: [String: String]? = nil,
        input: Stream = .null, output: Stream = .null, error: Stream = .inherited
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        var pipeEnds: [Int32] = [-1, -1]
        if case .pipe = input {
            guard pipe(&pipeEnds) == 0 else { throw failure("pipe", errno, program) }
            // Neither end for a program spawned elsewhere (pipe2, which sets this at once, is a
            // GNU extension Swift's Glibc module does not declare).
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[0], 0)
        } else {
            try redirect(&actions, 0, input, program: program)
        }
        try redirect(&actions, 1, output, program: program)
        try redirect(&actions, 2, error, program: program)
        closeInheritedDescriptors(&actions)

        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawnp(&pid, program, &actions, &attributes, argv, $0) }
            ?? posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        if pipeEnds[0] >= 0 { close(pipeEnds[0]) }
        guard spawned == 0 else {
            if pipeEnds[1] >= 0 { close(pipeEnds[1]) }
            throw failure("posix_spawn", spawned, program)
        }
        return ChildProcess(
            pid: pid, command: ([program] + arguments).joined(separator: " "), inputPipe: pipeEnds[1] >= 0 ? pipeEnds[1] : nil)
    }

    /// Runs `program` to its end within `timeout` (past it, it is killed) and returns what it
    /// wrote to standard output. Throws, with the end of what it wrote to standard error, when
    /// it cannot start, fails or runs out of time.
    @discardableResult
    /// `sharedFolder`: the folder of its input and output is readable by other users (a program
    /// run as another user, `runuser -u postgres`); otherwise this user's alone.
    public static func run(
        _ program: String, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil,
        timeout: Duration = .seconds(300), sharedFolder: Bool = false
    ) throws -> Data {
        let started = try Started(program, arguments, environment: environment, input: input, sharedFolder: sharedFolder)
        defer { started.clean() }
        return try started.output(ended: started.child.wait(within: timeout), timeout: timeout)
    }

    /// `run` for a caller in a task: it sleeps between looks at the child instead of holding a
    /// thread of Swift's cooperative pool (two cores give the pool two threads; a test blocking
    /// both for a slow program starves every other test's tasks).
    @discardableResult
    public static func runInTask(
        _ program: String, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil,
        timeout: Duration = .seconds(300)
    ) async throws -> Data {
        let started = try Started(program, arguments, environment: environment, input: input, sharedFolder: false)
        defer { started.clean() }
        return try started.output(ended: await started.child.wait(within: timeout), timeout: timeout)
    }

    /// A child started with its input, output and error in files of a folder of its own.
    private struct Started {
        let folder: URL
        let outputFile: URL
        let errorFile: URL
        let child: ChildProcess

        init(_ program: String, _ arguments: [String], environment: [String: String]?, input: Data?, sharedFolder: Bool) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            if sharedFolder { try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path) }
            let inputFile = folder.appendingPathComponent("input")
            outputFile = folder.appendingPathComponent("output")
            errorFile = folder.appendingPathComponent("error")
            do {
                if let input { try input.write(to: inputFile) }
                child = try spawn(
                    program, arguments, environment: environment, input: input == nil ? .null : .file(inputFile),
                    output: .file(outputFile), error: .file(errorFile))
            } catch {
                try? FileManager.default.removeItem(at: folder)
                throw error
            }
        }

        func output(ended: Termination?, timeout: Duration) throws -> Data {
            // Some programs (mariadb-install-db, shell scripts) say why they failed on their output.
            let complaint = {
                let error = String(((try? String(contentsOf: errorFile, encoding: .utf8)) ?? "").suffix(2000))
                let output = String(((try? String(contentsOf: outputFile, encoding: .utf8)) ?? "").suffix(1000))
                return output.isEmpty ? error : error + "\n(its output) " + output
            }
            guard let ended else {
                child.kill()
                throw Failure(description: "\(child.command) did not finish within \(timeout): \(complaint())")
            }
            guard ended == .exited(0) else {
                throw Failure(description: "\(child.command) \(ended): \(complaint())")
            }
            return (try? Data(contentsOf: outputFile)) ?? Data()
        }

        func clean() { try? FileManager.default.removeItem(at: folder) }
    }

    /// Whether it has not ended yet.
    public var isRunning: Bool { ended == nil }

    /// How it ended, or nil while it runs. Reaps it once it has ended.
    public var ended: Termination? {
        termination.withLock { known in
            if let known { return known }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid {
                // The low seven bits name the signal that ended it; zero means it exited.
                known = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signalled(status & 0x7f)
            } else if reaped == -1 && errno == ECHILD {
                known = .unknown
            }
            return known
        }
    }

    /// Waits until it ends, at most `timeout`; how it ended, or nil if it still runs.
    public func wait(within timeout: Duration) -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let ended { return ended }
            guard ContinuousClock.now < deadline else { return nil }
            usleep(10_000)
        }
    }

    /// `wait(within:)` for a caller in a task: it sleeps between looks instead of holding a
    /// thread of Swift's cooperative pool, which an in-process server the child is talking to
    /// (a fake APNs, a forwarding target) may need to answer it.
    public func wait(within timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let ended { return ended }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Sends `signal` (nothing once it has ended: its pid may be another process's by then).
    public func send(_ signal: Int32) {
        guard isRunning else { return }
        Foundation.kill(pid, signal)
    }

    /// SIGKILL, and waits for the kernel to end it.
    public func kill() {
        send(SIGKILL)
        _ = wait(within: .seconds(30))
    }

    /// SIGTERM, and waits up to `grace` for it to end; past that, SIGKILL. Returns whether it
    /// ended by itself.
    @discardableResult
    public func stop(grace: Duration = .seconds(30)) -> Bool {
        send(SIGTERM)
        if wait(within: grace) != nil { return true }
        kill()
        return false
    }

    /// `kill()` for a caller in a task.
    public func kill() async {
        send(SIGKILL)
        _ = await wait(within: .seconds(30))
    }

    /// `stop(grace:)` for a caller in a task.
    @discardableResult
    public func stop(grace: Duration = .seconds(30)) async -> Bool {
        send(SIGTERM)
        if await wait(within: grace) != nil { return true }
        await kill()
        return false
    }

    /// Closes the pipe of standard input (`.pipe`): the program reads its end.
    public func closeInput() {
        inputPipe.withLock { pipe in
            if let descriptor = pipe { close(descriptor) }
            pipe = nil
        }
    }

    deinit {
        closeInput()
        if isRunning {
            Foundation.kill(pid, SIGKILL)
            _ = wait(within: .seconds(30))
        }
    }

    private static func redirect(_ actions: inout posix_spawn_file_actions_t, _ descriptor: Int32, _ stream: Stream, program: String)
        throws
    {
        switch stream {
        case .null:
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        case .file(let url):
            let flags = descriptor == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_APPEND
            posix_spawn_file_actions_addopen(&actions, descriptor, url.path, flags, 0o666)
        case .inherited:
            break
        case .pipe:
            throw Failure(description: "\(program): only standard input can be a pipe")
        }
    }

    /// Adds the closing of every descriptor above the standard three: glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34), which Swift's Glibc module does not
    /// declare, or else one close for each descriptor open now.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    private static func failure(_ call: String, _ code: Int32, _ program: String) -> Failure {
        Failure(description: "\(program) could not be started: \(call) failed (\(String(cString: strerror(code))))")
    }
}
