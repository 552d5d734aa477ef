import Foundation
import ServiceKit
import Synchronization

/// nginx (Debian's package) on loopback as the load balancer in front of service replicas: one
/// listening port per upstream group, round robin, a refused connection passed to the next
/// replica (a request already sent to one that died is not: it is answered 502, as a real load
/// balancer answers a non-idempotent request it cannot know the fate of). A replica can be taken
/// out and put back by reloading the configuration. Every request is logged with its timing and
/// the replicas it went to, for a test to account for each 5xx.
public final class NginxProcess: Sendable {
    /// One line of the access log.
    public struct Entry: Sendable, CustomStringConvertible {
        /// When the request arrived and when it was answered, seconds since 1970.
        public var started: Double
        public var ended: Double
        public var status: Int
        /// The replicas tried, in order (`host:port`).
        public var upstreams: [String]
        public var method: String
        public var path: String

        public var description: String {
            "\(method) \(path) \(status) via \(upstreams.joined(separator: ",")) [\(started)–\(ended)]"
        }
    }

    /// Each group's port on 127.0.0.1, by name.
    public let ports: [String: Int]
    /// The master process, set once it is started.
    private let process = Mutex<ChildProcess?>(nil)
    private let folder: URL

    /// Starts nginx with one server per group, proxying to the group's replica ports.
    public static func start(groups: [String: [Int]]) async throws -> NginxProcess {
        guard let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile) else {
            throw TestServerError(description: "nginx is not installed (Debian's package nginx-light)")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Its workers run as nobody when nginx is started as root.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        var ports: [String: Int] = [:]
        for name in groups.keys { ports[name] = try SMTPTestServer.freePort() }
        let nginx = NginxProcess(binary: binary, groups: groups, ports: ports, folder: folder)
        try nginx.writeConfiguration(down: [])
        let process = try ChildProcess.spawn(binary, nginx.arguments, error: .null)
        nginx.process.withLock { $0 = process }
        for port in ports.values {
            try await eventually("nginx listening on \(port)", within: .seconds(15)) { () -> Bool? in
                guard process.isRunning else { throw TestServerError(description: "nginx exited: \(nginx.errorLog)") }
                return SMTPTestServer.accepts(port: port) ? true : nil
            }
        }
        return nginx
    }

    private init(binary: String, groups: [String: [Int]], ports: [String: Int], folder: URL) {
        self.binary = binary
        self.groups = groups
        self.ports = ports
        self.folder = folder
    }

    private let binary: String
    private let groups: [String: [Int]]

    private var configuration: URL { folder.appendingPathComponent("nginx.conf") }
    private var arguments: [String] {
        ["-c", configuration.path, "-p", folder.path, "-e", folder.appendingPathComponent("error.log").path]
    }

    /// Takes the replica on `port` out of its group (`down`) or puts it back, as a rolling deploy
    /// does before stopping a replica and after starting it: nginx reloads its configuration, and
    /// this returns once every worker of the old one has finished the requests it had in flight
    /// and exited, so that nothing is on its way to a replica taken out.
    public func drain(_ ports: Set<Int>) async throws {
        let before = workers()
        try writeConfiguration(down: ports)
        do {
            try ChildProcess.run(binary, arguments + ["-s", "reload"], timeout: .seconds(30))
        } catch {
            throw TestServerError(description: "\(error)\n\(errorLog)")
        }
        try await eventually("nginx's old workers gone after a reload", within: .seconds(60), poll: .milliseconds(20)) {
            self.workers().intersection(before)
        } until: { $0.isEmpty }
    }

    /// The process ids of nginx's workers (the children of its master).
    private func workers() -> Set<Int32> {
        guard let master = process.withLock({ $0?.pid }) else { return [] }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return Set(entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // pid (comm) state ppid ...
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == master ? pid : nil
        })
    }

    private func writeConfiguration(down: Set<Int>) throws {
        var blocks = ""
        for (name, replicas) in groups.sorted(by: { $0.key < $1.key }) {
            // max_fails=0: a replica that refused a connection is not set aside for a while (on
            // loopback a refusal costs nothing, and one set aside just as the other replica goes
            // down would leave no replica to try).
            let servers = replicas.map { "        server 127.0.0.1:\($0) max_fails=0\(down.contains($0) ? " down" : "");" }
                .joined(separator: "\n")
            blocks += """
                    upstream \(name) {
                \(servers)
                    }
                    server {
                        listen 127.0.0.1:\(ports[name]!);
                        location / {
                            proxy_pass http://\(name);
                            proxy_next_upstream error timeout;
                            proxy_next_upstream_tries 2;
                            proxy_connect_timeout 2s;
                            proxy_read_timeout 60s;
                            proxy_set_header Host $http_host;
                            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        }
                    }

                """
        }
        try """
            daemon off;
            worker_processes 1;
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/error.log warn;
            events { worker_connections 4096; }
            http {
                log_format timed '$msec $request_time $status "$upstream_addr" $request_method $uri';
                access_log \(folder.path)/access.log timed;
                client_body_temp_path \(folder.path)/body;
                proxy_temp_path \(folder.path)/proxy;
                fastcgi_temp_path \(folder.path)/fastcgi;
                uwsgi_temp_path \(folder.path)/uwsgi;
                scgi_temp_path \(folder.path)/scgi;
                client_max_body_size 20m;
            \(blocks)
            }

            """.write(to: configuration, atomically: true, encoding: .utf8)
    }

    public func baseURL(_ group: String) -> String { "http://127.0.0.1:\(ports[group]!)" }

    public var errorLog: String {
        String(((try? String(contentsOf: folder.appendingPathComponent("error.log"), encoding: .utf8)) ?? "").suffix(4000))
    }

    /// Every request logged so far.
    public func entries() throws -> [Entry] {
        let text = try String(contentsOf: folder.appendingPathComponent("access.log"), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            // msec request_time status "upstreams" method uri
            let quoted = line.split(separator: "\"", omittingEmptySubsequences: false)
            let head = quoted.first?.split(separator: " ") ?? []
            guard quoted.count == 3, head.count == 3, let ended = Double(head[0]), let took = Double(head[1]),
                let status = Int(head[2])
            else { throw TestServerError(description: "unreadable access log line: \(line)") }
            let tail = quoted[2].split(separator: " ")
            let upstreams = quoted[1].split(whereSeparator: { $0 == "," || $0 == " " })
                .map(String.init).filter { $0 != "-" && !$0.isEmpty }
            return Entry(
                started: ended - took, ended: ended, status: status, upstreams: upstreams,
                method: tail.first.map(String.init) ?? "", path: tail.dropFirst().first.map(String.init) ?? "")
        }
    }

    /// SIGTERM (nginx's fast shutdown); SIGKILL if it has not ended within 30 s.
    public func stop() {
        process.withLock { $0 }?.stop()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
