import AsyncHTTPClient
import Foundation
import PostgresNIO
import Synchronization
import Testing
import TestSupport

/// Two replicas of every executable behind nginx, one PostgreSQL of the test's own, steady load
/// from simulated participants and a researcher in the console. Mid-load one replica of each
/// service is killed with SIGKILL and started again, then every replica is restarted in turn (a
/// rolling deploy), then PostgreSQL is stopped as a crash stops it and started again. Afterwards
/// every response acknowledged is in the study's tables exactly once, every queue has drained
/// with nothing sent twice, forwarding never had two senders of one response at once, every
/// migration ran once, and every 5xx nginx answered was a request in flight on a killed process.
/// The same again through PgBouncer in transaction mode.
@Suite(.serialized) struct ReplicaTests {
    static let workers = 6

    /// Writes `text` to `.build/test-output/replicas-<name>.txt`, where `make test` leaves what a
    /// reader of the run wants to see (swift test shows no output of a passing test).
    static func report(_ name: String, _ text: String) {
        let folder = ServiceProcess.packageRoot.appendingPathComponent(".build/test-output")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("replicas-\(name).txt")
        let previous = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        try? (previous + text + "\n").write(to: file, atomically: true, encoding: .utf8)
    }

    /// Each case within seven minutes (it takes one or two): past that the case is cancelled,
    /// which `exercise` reports with every replica's log, as make test's own limit cannot.
    @Test(.needsCluster, .timeLimit(.minutes(7)), arguments: [false, true])
    func everyServiceRunsAsTwoReplicasThroughKillsRollingRestartsAndAPostgreSQLRestart(throughPgBouncer: Bool) async throws {
        // APNs, on this machine: both registration replicas push to it.
        try await FakeAPNs.forPlatform { apns, push in
            try await ForwardingTargetServer.run(auth: .basic(user: "replicas", password: "target-pass"), hold: .milliseconds(20)) {
                target, port in
                try await PrivateCluster.run { cluster in
                    try await ReplicatedPlatform.run(
                        throughPgBouncer: throughPgBouncer, registrationSettings: push,
                        responseSettings: ["FORWARDING_ALLOW_PRIVATE_TARGETS": "true"], tokenCount: 400
                    ) { platform in
                        do {
                            try await exercise(
                                platform, cluster: cluster, target: target, targetPort: port, apns: apns, pooled: throughPgBouncer)
                        } catch {
                            Issue.record("\(error)\n\(platform.logTails())\nnginx:\n\(platform.nginx.errorLog)")
                        }
                    }
                }
            }
        }
    }

    func exercise(
        _ platform: ReplicatedPlatform, cluster: PrivateCluster, target: ForwardingTargetServer, targetPort: Int, apns: FakeAPNs,
        pooled: Bool
    ) async throws {
        let admin = Admin(base: platform.baseURL(.metadata), token: platform.admin.token)
        // DEMOAPP's APNs key, uploaded as an admin does: study-metadata relays it to registration.
        let credentials = try await admin.send(
            .PUT, "/admin/v1/apps/DEMOAPP/push/ios", raw: try JSONEncoder().encode(apns.credentials))
        #expect(credentials.status == 200, "\(credentials.text)")
        let forwarding = try await admin.send(
            .PUT, platform.baseURL(.response) + "/admin/v1/studies/DEMOSTUDY/forwarding",
            json: ["type": "Basic", "url": "http://127.0.0.1:\(targetPort)/forward", "username": "replicas", "password": "target-pass"])
        #expect(forwarding.status == 200, "\(forwarding.text)")
        let activities = try await platform.app().wcp("activityList", [("studyId", "DEMOSTUDY")])
        let daily = try #require(activities.json?["activities"]?.array?.first { $0["activityId"]?.string == "daily" })
        let version = try #require(daily["activityVersion"]?.string)
        let design = try await platform.app().wcp("activity", [("studyId", "DEMOSTUDY"), ("activityId", "daily"), ("activityVersion", version)])
        let name = try #require(design.json?["activity"]?["metadata"]?["name"]?.string)

        let load = ParticipantLoad(platform: platform, dailyVersion: version, dailyName: name)
        let console = ConsoleVisitor(base: platform.baseURL(.console))
        async let loading: Void = load.run(workers: Self.workers)
        async let browsing: Void = console.run()
        defer {
            load.stop()
            console.stop()
        }
        try await load.progress(by: 10)
        let during = try await admin.send(.POST, "/admin/v1/apps/DEMOAPP/notifications", json: ["notificationId": "during", "text": "During."])
        #expect(during.status == 201, "\(during.text)")
        // One replica of each, killed mid-load and started again.
        for role in ReplicatedPlatform.Role.allCases {
            try await platform.killAndRestart(role, replica: 0)
            try await load.progress(by: 3)
        }
        // A rolling restart of all of them.
        for role in ReplicatedPlatform.Role.allCases {
            try await platform.rollingRestart(role)
            try await load.progress(by: 2)
        }
        // The console needs the services' databases for every page: its visits end here.
        console.stop()
        try await browsing
        let boundary = Date().timeIntervalSince1970
        // PostgreSQL stops as a crash stops it: every replica says it is not ready, then is ready
        // again once PostgreSQL is back, and the load goes on.
        try cluster.stopImmediately()
        let down = try await eventually("every replica's /readyz 503", within: .seconds(30)) { await platform.readiness() }
            until: { $0.allSatisfy { $0 == 503 } }
        try cluster.start()
        let up = try await eventually("every replica's /readyz 200 again", within: .seconds(60)) { await platform.readiness() }
            until: { $0.allSatisfy { $0 == 200 } }
        #expect(down.count == 6 && up.count == 6)
        try await load.progress(by: 10)
        load.stop()
        await loading

        let after = try await eventually("an announcement accepted after the restart", within: .seconds(30)) {
            let reply = try? await admin.send(.POST, "/admin/v1/apps/DEMOAPP/notifications", json: ["notificationId": "after", "text": "After."])
            return reply?.status == 201 ? reply : nil
        }
        #expect(after.status == 201)

        let ledger = load.snapshot
        try await checkResponses(platform, acknowledged: ledger.acknowledged, target: target)
        try await checkQueues(platform, apns: apns)
        try await checkStates(ledger.finished)
        try await checkMigrations(platform)
        let unexplained = try checkFailures(platform, before: boundary)
        let consoleLedger = console.snapshot
        if !consoleLedger.unexpected.isEmpty { Self.report("logs", "console: \(consoleLedger.unexpected)") }
        #expect(consoleLedger.pages > 0 && consoleLedger.unexpected.isEmpty, "console: \(consoleLedger)")
        Self.report("counts", """
            \(Date()) replicas\(pooled ? " through PgBouncer" : ""): \(ledger.signUps.count) sign-ups, \(ledger.finished.count) participants \
            finished, \(ledger.abandoned.count) abandoned, \(ledger.acknowledged.count) responses acknowledged, \(ledger.calls) calls, \
            retried after \(ledger.failures); kills: \(platform.kills.count); 5xx in nginx's log before the PostgreSQL restart: \
            \(unexplained.explained) explained, \(unexplained.unexplained) not; console pages: \(consoleLedger.pages)
            """)
    }

    /// Every acknowledged response stored once, nothing stored twice, and every response forwarded
    /// (at least once, never by two senders at the same moment).
    func checkResponses(_ platform: ReplicatedPlatform, acknowledged: [String], target: ForwardingTargetServer) async throws {
        #expect(acknowledged.count >= 40, "the load acknowledged only \(acknowledged.count) responses")
        #expect(Set(acknowledged).count == acknowledged.count)
        // [all, forwarded]. A response claimed by a replica that was killed waits out its lease
        // (45 s to process, 100 s to forward) before another claims it.
        let responses = try await eventually("every response processed and forwarded", within: .seconds(240), poll: .milliseconds(500)) {
            try await DatabaseRestartTests.counts(
                "SELECT count(*)::int, count(*) FILTER (WHERE status = 'forwarded')::int FROM responses",
                in: platform.databases.response)
        } until: { $0[0] >= acknowledged.count && $0[1] == $0[0] }
        let stored = try await TestDatabase.withClient(url: platform.databases.response) { postgres, logger in
            let located = try await postgres.query(
                """
                SELECT table_schema, column_name FROM information_schema.columns
                WHERE table_name = 'daily' AND lower(column_name) = 'notes'
                """, logger: logger)
            var place: (String, String)?
            for try await (schema, column) in located.decode((String, String).self) { place = (schema, column) }
            guard let (schema, column) = place else { throw TestServerError(description: "no daily table with a notes column") }
            let rows = try await postgres.query(
                PostgresQuery(unsafeSQL: "SELECT \"\(column)\", count(*)::int FROM \"\(schema)\".daily GROUP BY 1"), logger: logger)
            var counts: [String: Int] = [:]
            for try await (notes, count) in rows.decode((String, Int).self) { counts[notes] = count }
            return counts
        }
        let lost = acknowledged.filter { stored[$0] == nil }
        let duplicated = stored.filter { $0.value > 1 }
        #expect(lost.isEmpty, "acknowledged but not stored: \(lost)")
        #expect(duplicated.isEmpty, "stored more than once: \(duplicated)")
        // Stored but never acknowledged: answered 502 by nginx when their replica was killed after
        // committing them, and repeated by the app (stored once, the repeat recognised).
        #expect(stored.count == responses[0], "\(stored.count) rows in daily for \(responses[0]) responses")
        let delivered = await target.deliveries.map(\.responseId)
        #expect(Set(delivered).count == responses[0], "the target saw \(Set(delivered).count) of \(responses[0])")
        let overlaps = await target.overlaps
        #expect(overlaps.isEmpty, "delivered by two senders at once: \(overlaps)")
        Self.report("counts", "  responses \(responses[0]) stored for \(acknowledged.count) acknowledged; lost \(lost.count), " +
              "duplicated \(duplicated.count); deliveries \(delivered.count) of \(Set(delivered).count) distinct")
    }

    /// Mail, pushes and internal calls: all delivered (or still queued), none twice.
    func checkQueues(_ platform: ReplicatedPlatform, apns: FakeAPNs) async throws {
        let databases = platform.databases
        // [queued, sent]
        let mail = try await eventually("every e-mail sent", within: .seconds(120), poll: .milliseconds(500)) {
            try await DatabaseRestartTests.counts(
                "SELECT count(*)::int, count(*) FILTER (WHERE sent_at IS NOT NULL)::int FROM mail_outbox", in: databases.registration)
        } until: { $0[0] > 0 && $0[1] == $0[0] }
        let files = try FileManager.default.contentsOfDirectory(atPath: platform.mailDirectory.path).filter { $0.hasSuffix(".eml") }
        // One file per message, named by its id: a message sent twice would have replaced its file,
        // so the count of Message-IDs written is compared with the outbox.
        let messageIds = try files.map { file -> String in
            let text = try String(contentsOf: platform.mailDirectory.appendingPathComponent(file), encoding: .utf8)
            return String(text.firstMatch(of: /Message-ID: <([^>]+)>/)?.1 ?? "")
        }
        #expect(files.count == mail[1], "\(files.count) message files for \(mail[1]) sent")
        #expect(Set(messageIds).count == files.count)

        for database in [databases.metadata, databases.registration, databases.response] {
            // [queued, delivered, given up]
            let calls = try await eventually("every internal call delivered", within: .seconds(120), poll: .milliseconds(500)) {
                try await DatabaseRestartTests.counts(
                    """
                    SELECT count(*)::int, count(*) FILTER (WHERE delivered_at IS NOT NULL)::int,
                        count(*) FILTER (WHERE gave_up_at IS NOT NULL)::int FROM internal_outbox
                    """, in: database)
            } until: { $0[1] == $0[0] }
            #expect(calls[2] == 0)
        }
        // Both announcements reached registration once each, whatever the retries, and became
        // one push per device each: a repeated delivery of an announcement queues nothing again.
        // [announcements, pushes, distinct (announcement, device), sent, given up]
        let pushes = try await eventually("both announcements received and every push settled", within: .seconds(120)) {
            try await DatabaseRestartTests.counts(
                """
                SELECT (SELECT count(*) FROM received_notifications WHERE notification_id IN ('during', 'after'))::int,
                    count(*)::int, count(DISTINCT (p.notification_id, p.session_id))::int,
                    count(*) FILTER (WHERE p.sent_at IS NOT NULL)::int, count(*) FILTER (WHERE p.gave_up_at IS NOT NULL)::int
                FROM push_outbox p JOIN received_notifications n ON n.id = p.notification_id
                WHERE n.notification_id IN ('during', 'after')
                """, in: databases.registration)
        } until: { $0[0] == 2 && $0[1] == $0[3] + $0[4] }
        #expect(pushes[1] > 0 && pushes[1] == pushes[2], "\(pushes[1]) pushes for \(pushes[2]) (announcement, device) pairs")
        #expect(pushes[4] == 0, "\(pushes[4]) pushes given up")
        // APNs received each once: one per push sent, each (device, announcement) once, and every
        // collapse id once. (The study's own notifications reach APNs too, and must be once each.)
        // The one exception is what a SIGKILL allows, at least once: a push APNs accepted just
        // before its replica was killed, before the replica could record it, is sent again once
        // its lease ends. A replica stopped with SIGTERM, or cut off from PostgreSQL, records
        // what it sent; there the exception does not apply.
        let (everything, repeated) = try await pushesOnce(apns.received, kills: platform.kills, database: databases.registration)
        let received = everything.filter { ["During.", "After."].contains($0.payload["aps"]?["alert"]?["body"]?.text) }
        let pairs = Set(received.map { "\($0.deviceToken) \($0.payload["aps"]?["alert"]?["body"]?.text ?? "")" })
        #expect(received.count == pushes[3], "APNs received \(received.count) for \(pushes[3]) sent")
        #expect(pairs.count == received.count)
        Self.report(
            "counts", "  mail \(mail[1]) sent as \(files.count) files; pushes \(pushes[1]) queued, \(pushes[3]) sent, "
                + "\(received.count) received by APNs (\(everything.count) pushes in all, \(repeated) sent again after a SIGKILL)")
    }

    /// The pushes APNs accepted, each collapse id once, and how many were accepted twice. Each
    /// repeat must be explained by a SIGKILL: its first copy accepted in the moment before a
    /// registration replica was killed (a push is recorded as soon as APNs accepts it), its
    /// second after the kill, and its row claimed twice.
    func pushesOnce(
        _ accepted: [FakeAPNs.Received], kills: [ReplicatedPlatform.Kill], database: String
    ) async throws -> (once: [FakeAPNs.Received], repeated: Int) {
        let byCollapseId = Dictionary(grouping: accepted) { $0.headers["apns-collapse-id"] ?? "" }
        #expect(byCollapseId[""] == nil, "a push without a collapse id")
        let repeats = byCollapseId.filter { $0.value.count > 1 }
        let killed = kills.filter { $0.role == .registration }
        for (collapseId, copies) in repeats {
            let explained = copies.count == 2 && killed.contains { kill in
                copies[0].acceptedAt >= kill.sent - 2 && copies[0].acceptedAt <= kill.returned && copies[1].acceptedAt > kill.returned
            }
            #expect(explained, "\(collapseId) accepted \(copies.map(\.acceptedAt)); registration killed at \(killed.map(\.sent))")
            let id = try #require(Int(collapseId.dropFirst("push-".count)))
            let attempts = try await DatabaseRestartTests.counts("SELECT attempts FROM push_outbox WHERE id = \(id)", in: database)
            #expect(attempts == [2], "\(collapseId) claimed \(attempts) times")
        }
        return (byCollapseId.values.map { $0[0] }, repeats.count)
    }

    /// What each finished participant's app last reported is what the server holds.
    func checkStates(_ finished: [ParticipantLoad.Finished]) async throws {
        #expect(finished.count >= 5, "only \(finished.count) participants finished")
        for participant in finished {
            let state = try await participant.app.registration("activityState", method: .GET, query: [("studyId", "DEMOSTUDY")])
            let daily = state.json?["activities"]?.array?.first { $0["activityId"]?.string == "daily" }
            #expect(daily?["activityState"]?.string == "completed", "\(state.text)")
            #expect(daily?["activityRun"]?["completed"]?.number == Double(participant.completedRuns), "\(state.text)")
        }
    }

    /// Both replicas of each service started on a fresh database at the same moment. Each
    /// migration is recorded once (the table's key) and none is pending; a migration run a second
    /// time would have failed (they create what they make, without IF NOT EXISTS) and kept its
    /// replica from starting.
    func checkMigrations(_ platform: ReplicatedPlatform) async throws {
        for database in [platform.databases.metadata, platform.databases.registration, platform.databases.response] {
            let counts = try await DatabaseRestartTests.counts("SELECT count(*)::int FROM schema_migrations", in: database)
            #expect(counts[0] > 0)
        }
        let replicas = platform.replicas(.metadata) + platform.replicas(.registration) + platform.replicas(.response)
        #expect(replicas.count == 6)
        for replica in replicas {
            let ready = try await Wire.send(.GET, replica.baseURL + "/readyz")
            #expect(ready.status == 200 && ready.json?["pendingMigrations"] == nil, "\(ready.text)")
        }
    }

    /// Every 5xx nginx answered before PostgreSQL was stopped, each of which must have been a
    /// request in flight when a replica was killed (directly, or a service's call to a peer that
    /// was). A request still in flight when PostgreSQL stopped, or made after, may fail: PostgreSQL
    /// was gone.
    func checkFailures(_ platform: ReplicatedPlatform, before boundary: Double) throws -> (explained: Int, unexplained: Int) {
        let entries = try platform.nginx.entries()
        #expect(entries.count > 500, "nginx logged only \(entries.count) requests")
        let kills = platform.kills
        #expect(kills.count == ReplicatedPlatform.Role.allCases.count)
        // A readiness probe's 503 is its answer, not a failure: the console asks study-metadata's
        // `/readyz` through nginx, and a replica starting up says it is not ready yet. So is the
        // 503 of a replica still migrating before every replica had started (a peer's worker,
        // ready before it, calling in): it says to come back, and the caller does.
        let failures = entries.filter {
            $0.status >= 500 && $0.ended < boundary && $0.path != "/readyz" && !($0.status == 503 && $0.ended <= platform.startedAt)
        }
        let unexplained = failures.filter { entry in
            // nginx's times are to the millisecond.
            !kills.contains { entry.started <= $0.returned + 0.001 && entry.ended >= $0.sent - 0.001 }
        }
        if !unexplained.isEmpty || entries.contains(where: { $0.status == 500 }) {
            ReplicaTests.report("logs", "kills: \(kills)\nPostgreSQL stopped at \(boundary)\n\(platform.logTails())")
        }
        // While PostgreSQL was away requests are answered 503 (come back), never 500 (broken).
        let broken = entries.filter { $0.status == 500 }
        #expect(broken.isEmpty, "answered 500: \(broken.prefix(20))")
        #expect(unexplained.isEmpty, "5xx not in flight on a killed replica: \(unexplained.prefix(20))\n\(platform.logTails())")
        return (failures.count - unexplained.count, unexplained.count)
    }
}

/// A researcher with the console open: signs in once (through nginx, so the sealed session is
/// made by one replica and read by whichever answers next) and reloads the studies list and the
/// study's page until stopped. Every page must come back 200, except a request in flight on a
/// replica that was killed, which the browser would show as an error and the researcher reload.
final class ConsoleVisitor: Sendable {
    struct Ledger: CustomStringConvertible {
        var pages = 0
        var retried = 0
        var unexpected: [String] = []
        var stopped = false
        var description: String { "\(pages) pages, \(retried) retried, unexpected: \(unexpected.prefix(5))" }
    }

    let base: String
    private let ledger = Mutex(Ledger())

    init(base: String) { self.base = base }

    var snapshot: Ledger { ledger.withLock { $0 } }
    func stop() { ledger.withLock { $0.stopped = true } }

    func run() async throws {
        // Redirects are the browser's to follow: the sign-in's 303 carries the session cookie.
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await visit(client)
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private func visit(_ client: HTTPClient) async throws {
        let browser = WireBrowser(base: base, client: client)
        try await browser.signIn(Platform.adminEmail, Platform.adminPassword)
        while !ledger.withLock({ $0.stopped }) {
            for path in ["/", "/studies/DEMOSTUDY"] {
                let page = try? await browser.send(.GET, path)
                ledger.withLock {
                    switch page?.status {
                    case 200: $0.pages += 1
                    // In flight on a killed replica (checked against nginx's log), or no answer at
                    // all: a kept-alive connection nginx closed as it reloaded, which a browser
                    // sends the page again on.
                    case 502, nil: $0.retried += 1
                    default: $0.unexpected.append("\(path): \(page?.status ?? 0)")
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
