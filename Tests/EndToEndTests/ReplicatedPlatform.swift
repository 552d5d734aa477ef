import Foundation
import ServiceKit
import Synchronization
import Testing
import TestSupport

/// The four executables, two replicas of each, behind nginx on loopback, against one PostgreSQL
/// (optionally through PgBouncer in transaction mode): what an institution runs once it outgrows
/// one machine. Clients and the services themselves reach each service only through nginx, as
/// they would through a Kubernetes Service. Replicas can be killed, started again and restarted
/// one after another while the platform is under load; every SIGKILL is recorded with the moment
/// it happened, so that each 5xx nginx logged can be accounted for.
final class ReplicatedPlatform: Sendable {
    enum Role: String, CaseIterable, Sendable {
        case metadata = "study-metadata", registration, response, console
    }

    /// The moments around one SIGKILL: a request in flight on the replica was sent before
    /// `returned` and answered after `sent`.
    struct Kill: Sendable {
        var role: Role
        var port: Int
        var sent: Double
        var returned: Double
    }

    static let replicas = 2

    let nginx: NginxProcess
    /// When every replica had started and answered `/readyz` 200 (seconds since 1970, as nginx
    /// logs): before it, a replica still migrating answers 503 to what reaches it.
    let startedAt: Double
    let environments: [Role: [String: String]]
    let ports: [Role: [Int]]
    let databases: PlatformDatabases
    let mailDirectory: URL
    let admin: Admin
    let iosCredential: String
    let tokens: [String]
    private let processes: Mutex<[Role: [ServiceProcess]]>
    private let killed = Mutex<[Kill]>([])
    /// Replicas that were stopped or killed, kept so that their logs last until the end.
    private let retired = Mutex<[ServiceProcess]>([])

    struct PlatformDatabases: Sendable {
        var metadata: String
        var registration: String
        var response: String
    }

    /// Starts every replica at once (both replicas of a service migrate the same fresh database at
    /// the same moment), nginx in front, seeds the demo with `tokenCount` tokens, runs `body`,
    /// and stops everything.
    static func run(
        throughPgBouncer: Bool, registrationSettings: [String: String], responseSettings: [String: String], tokenCount: Int,
        _ body: @Sendable (ReplicatedPlatform) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { metadataDB in
            try await TestDatabase.withFreshDatabase { registrationDB in
                try await TestDatabase.withFreshDatabase { responseDB in
                    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replicas-\(UUID().uuidString)")
                    let mail = folder.appendingPathComponent("mail")
                    let consents = folder.appendingPathComponent("consents")
                    defer { try? FileManager.default.removeItem(at: folder) }
                    var ports: [Role: [Int]] = [:]
                    for role in Role.allCases { ports[role] = try (0..<replicas).map { _ in try SMTPTestServer.freePort() } }
                    let nginx = try await NginxProcess.start(groups: Dictionary(uniqueKeysWithValues: ports.map { ($0.rawValue, $1) }))
                    defer { nginx.stop() }
                    let bouncer = throughPgBouncer ? try await PgBouncerProcess.start(upstream: metadataDB) : nil
                    defer { bouncer?.stop() }
                    let database = { (url: String) in bouncer?.route(url) ?? url }
                    let urls = PlatformURLs(
                        metadata: nginx.baseURL(Role.metadata.rawValue), registration: nginx.baseURL(Role.registration.rawValue),
                        response: nginx.baseURL(Role.response.rawValue))
                    let services = Platform.environments(
                        urls: urls, databases: (database(metadataDB), database(registrationDB), database(responseDB)),
                        queryDatabase: try await TestDatabase.queryReaderURL(responseDB), mail: mail, consents: consents,
                        pooled: throughPgBouncer)
                    // Every client comes through nginx, from one address: the per-address limits
                    // would count the whole load as one client.
                    let unlimited = ["RATE_LIMIT_PER_MINUTE": "100000"]
                    let environments: [Role: [String: String]] = [
                        .metadata: services[.studyMetadata]!.merging(unlimited) { $1 },
                        .registration: services[.registration]!.merging(unlimited) { $1 }.merging(registrationSettings) { $1 },
                        .response: services[.response]!.merging(unlimited) { $1 }.merging(responseSettings) { $1 },
                        .console: [
                            "CONSOLE_KEY": InternalKeys.generateKey(), "LOG_LEVEL": "warning",
                            "CONSOLE_PUBLIC_URL": nginx.baseURL(Role.console.rawValue),
                            "STUDY_METADATA_URL": urls.metadata, "REGISTRATION_URL": urls.registration, "RESPONSE_URL": urls.response,
                        ],
                    ]
                    let started = try await withThrowingTaskGroup(of: (Role, Int, ServiceProcess).self) { group in
                        for role in Role.allCases {
                            for (index, port) in ports[role]!.enumerated() {
                                group.addTask { (role, index, try await ServiceProcess.start(role.rawValue, environment: environments[role]!, port: port)) }
                            }
                        }
                        var started: [Role: [ServiceProcess?]] = Dictionary(
                            uniqueKeysWithValues: Role.allCases.map { ($0, Array(repeating: nil, count: replicas)) })
                        for try await (role, index, process) in group { started[role]![index] = process }
                        return started.mapValues { $0.compactMap { $0 } }
                    }
                    let startedAt = Date().timeIntervalSince1970
                    let seeded = try await Platform.seedDemo(metadata: urls.metadata, response: urls.response, tokens: tokenCount)
                    let platform = ReplicatedPlatform(
                        nginx: nginx, startedAt: startedAt, environments: environments, ports: ports,
                        databases: PlatformDatabases(metadata: metadataDB, registration: registrationDB, response: responseDB),
                        mailDirectory: mail, admin: seeded.admin, iosCredential: seeded.ios, tokens: seeded.tokens, processes: started)
                    defer { platform.stopAll() }
                    try await body(platform)
                }
            }
        }
    }

    private init(
        nginx: NginxProcess, startedAt: Double, environments: [Role: [String: String]], ports: [Role: [Int]], databases: PlatformDatabases,
        mailDirectory: URL, admin: Admin, iosCredential: String, tokens: [String], processes: [Role: [ServiceProcess]]
    ) {
        self.nginx = nginx
        self.startedAt = startedAt
        self.environments = environments
        self.ports = ports
        self.databases = databases
        self.mailDirectory = mailDirectory
        self.admin = admin
        self.iosCredential = iosCredential
        self.tokens = tokens
        self.processes = Mutex(processes)
    }

    /// The service as clients reach it: through nginx.
    func baseURL(_ role: Role) -> String { nginx.baseURL(role.rawValue) }

    /// The replicas of `role`, each at its own address (for `/readyz`, which nginx would send to
    /// either one).
    func replicas(_ role: Role) -> [ServiceProcess] { processes.withLock { $0[role]! } }

    var kills: [Kill] { killed.withLock { $0 } }

    /// An app pointed at the platform through nginx.
    func app() -> MyStudiesApp {
        MyStudiesApp(
            kind: .ios, credential: iosCredential, wcpBase: baseURL(.metadata) + "/StudyMetaData/",
            registrationBase: baseURL(.registration) + "/fdahpUserRegWS/", responseBase: baseURL(.response) + "/mobileappstudy-")
    }

    /// SIGKILL to one replica, then what Kubernetes does once its probes see it gone: out of the
    /// load balancer, started again on its port, back in once it is ready (nginx has no probes of
    /// its own, and would otherwise send requests to a replica still starting up).
    func killAndRestart(_ role: Role, replica index: Int) async throws {
        let process = replicas(role)[index]
        let sent = Date().timeIntervalSince1970
        await process.kill()
        let returned = Date().timeIntervalSince1970
        killed.withLock { $0.append(Kill(role: role, port: process.port, sent: sent, returned: returned)) }
        try await nginx.drain([process.port])
        try await start(role, replica: index)
        try await nginx.drain([])
    }

    /// Each replica of `role` in turn, as a rolling deploy replaces them: taken out of nginx
    /// (its requests in flight finish), SIGTERM, started again, ready, and put back before the
    /// next. A replica that does not end within its grace is a failure.
    ///
    /// Taking it out first is what a deploy does (Kubernetes removes the pod's endpoint; the
    /// manifests' preStop pause covers the moment before that reaches every proxy): a replica
    /// that closes its listening socket with connections still in the kernel's accept queue
    /// resets them, and the proxy answers those requests 502.
    func rollingRestart(_ role: Role) async throws {
        for index in 0..<Self.replicas {
            let process = replicas(role)[index]
            try await nginx.drain([process.port])
            #expect(await process.stop(), "\(role.rawValue) on \(process.port) did not end on SIGTERM:\n\(process.logTail())")
            try await start(role, replica: index)
            try await nginx.drain([])
        }
    }

    private func start(_ role: Role, replica index: Int) async throws {
        let port = ports[role]![index]
        let process = try await ServiceProcess.start(role.rawValue, environment: environments[role]!, port: port)
        let replaced = processes.withLock { all in
            defer { all[role]![index] = process }
            return all[role]![index]
        }
        retired.withLock { $0.append(replaced) }
    }

    /// What each replica's `/readyz` answers now (0 when nothing answers).
    func readiness() async -> [Int] {
        var statuses: [Int] = []
        for role in [Role.metadata, .registration, .response] {
            for process in replicas(role) {
                statuses.append((try? await Wire.send(.GET, process.baseURL + "/readyz").status) ?? 0)
            }
        }
        return statuses
    }

    /// The ends of every replica's log, those replaced included (their level is warning: each
    /// line is worth reading), for a failing test.
    func logTails() -> String {
        let all = processes.withLock { $0.values.flatMap { $0 } } + retired.withLock { $0 }
        return all.map { "--- \($0.name) \($0.port)\n\($0.logTail(30000))" }.joined(separator: "\n")
    }

    private func stopAll() {
        for process in processes.withLock({ $0.values.flatMap { $0 } }) where !process.stop() {
            Issue.record("\(process.name) on \(process.port) did not exit within 30 s of SIGTERM:\n\(process.logTail())")
        }
    }
}
