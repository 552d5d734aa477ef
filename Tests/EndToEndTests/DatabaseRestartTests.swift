import Foundation
import Logging
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Synchronization
import Testing
import TestSupport

/// PostgreSQL restarted under load, as an operator's `pg_ctl restart -m immediate` does: every
/// connection is cut mid-query and the server is gone for a moment. Afterwards every service is
/// ready again and every durable queue drains: responses processed and forwarded, mail sent,
/// notifications dispatched, internal calls delivered, pushes settled. Nothing acknowledged is lost.
@Suite(.needsCluster) struct DatabaseRestartTests {
    static let participants = 16
    static let password = "Restart-Passw0rd!"

    /// What the load saw: acknowledged writes and the answers that were not 200.
    final class Tally: Sendable {
        struct State {
            var responses = 0
            var accounts: [String] = []
            var failures: [Int: Int] = [:]
            var stopped = false
        }

        private let state = Mutex(State())

        func acknowledged(response: Void) { state.withLock { $0.responses += 1 } }
        func acknowledged(account: String) { state.withLock { $0.accounts.append(account) } }
        func failed(_ status: Int) { state.withLock { $0.failures[status, default: 0] += 1 } }
        var responses: Int { state.withLock { $0.responses } }
        var accounts: [String] { state.withLock { $0.accounts } }
        var failures: [Int: Int] { state.withLock { $0.failures } }
        var stopped: Bool { state.withLock { $0.stopped } }
        func stop() { state.withLock { $0.stopped = true } }
    }

    @Test func everyQueueDrainsAfterPostgreSQLRestartsUnderLoad() async throws {
        try await ForwardingTargetServer.run(auth: .basic(user: "restart", password: "target-pass")) { target, port in
            try await PrivateCluster.run { cluster in
                try await Platform.run(responseSettings: ["FORWARDING_ALLOW_PRIVATE_TARGETS": "true"]) { platform in
                    try await load(platform, restarting: cluster, targetPort: port, target: target)
                }
            }
        }
    }

    func load(_ platform: Platform, restarting cluster: PrivateCluster, targetPort: Int, target: ForwardingTargetServer) async throws {
        let admin = platform.admin
        let forwarding = try await admin.send(
            .PUT, platform.response.baseURL + "/admin/v1/studies/DEMOSTUDY/forwarding",
            json: ["type": "Basic", "url": "http://127.0.0.1:\(targetPort)/forward", "username": "restart", "password": "target-pass"])
        #expect(forwarding.status == 200, "\(forwarding.text)")
        // Each participant enrolls before the load starts.
        var appTokens: [String] = []
        for index in 0..<Self.participants {
            let app = platform.app(.ios)
            let enrolled = try await app.response(
                "enroll", [("studyId", "DEMOSTUDY"), ("token", platform.tokens[index]), ("allowDataSharing", "true")])
            appTokens.append(try #require(enrolled.json?["data"]?["appToken"]?.string, "\(enrolled.text)"))
        }
        #expect(appTokens.count == Self.participants)

        let tally = Tally()
        let tokens = appTokens
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, participant) in tokens.enumerated() {
                group.addTask {
                    let app = platform.app(.ios)
                    var round = 0
                    while !tally.stopped {
                        round += 1
                        // Wire errors (a connection the service dropped) count as failures too.
                        let reply = try? await app.processResponse(
                            JourneyResponses.dailyResponse(participant: participant, name: "daily", version: "1.0"))
                        if reply?.status == 200 { tally.acknowledged(response: ()) } else { tally.failed(reply?.status ?? 0) }
                        if round % 8 == 0 {
                            // A sign-up, which queues a verification e-mail, and the device's push token.
                            let email = "restart-\(index)-\(round)@example.org"
                            let registered = try? await app.registration(
                                "register", body: ["emailId": email, "password": Self.password])
                            if registered?.status == 200, let registered {
                                tally.acknowledged(account: email)
                                app.signedIn(registered)
                                _ = try? await app.registration(
                                    "updateUserProfile",
                                    body: ["settings": ["remoteNotifications": true],
                                           "info": ["os": "ios", "appVersion": "1.0", "deviceToken": String(repeating: "ab", count: 32)]])
                            } else {
                                tally.failed(registered?.status ?? 0)
                            }
                        }
                    }
                }
            }
            group.addTask {
                // An announcement before the restart and one after: notification dispatch, the
                // internal outbox and the push queue all carry work across it.
                _ = try await admin.send(.POST, "/admin/v1/apps/DEMOAPP/notifications", json: ["notificationId": "before", "text": "Before."])
                try await Task.sleep(for: .seconds(2))
                try cluster.restartImmediately()
                try await Task.sleep(for: .seconds(2))
                tally.stop()
            }
            try await group.waitForAll()
        }
        // PostgreSQL's crash recovery and every pool's reconnection share two cores with the
        // other suites in `make test`: once, the first announcement after took over 30 s there.
        let after = try await eventually(within: .seconds(60)) {
            let reply = try? await admin.send(.POST, "/admin/v1/apps/DEMOAPP/notifications", json: ["notificationId": "after", "text": "After."])
            return reply?.status == 201 ? reply : nil
        }
        #expect(after.status == 201)
        // Some requests in flight when the connections were cut may fail; most must not.
        #expect(tally.responses > 50, "acknowledged \(tally.responses), failures \(tally.failures)")
        #expect(tally.accounts.count > 5, "accounts \(tally.accounts.count), failures \(tally.failures)")

        // Every service is ready again.
        for service in [platform.metadata, platform.registration, platform.response] {
            let ready = try await eventually(within: .seconds(30)) {
                try? await Wire.send(.GET, service.baseURL + "/readyz").status == 200 ? true : nil
            }
            #expect(ready, "\(service.name) is not ready again")
        }

        // Every queue drains. Counts are compared, so an empty table cannot pass.
        let acknowledged = tally.responses
        // [all, forwarded, processed, pending, error]
        // A response claimed by a round the restart broke waits out its lease (45 s to process,
        // 100 s to forward) before it is claimed again.
        let responses = try await eventually("every response processed and forwarded", within: .seconds(180)) {
            try await Self.counts(
                """
                SELECT count(*)::int, count(*) FILTER (WHERE status = 'forwarded')::int,
                    count(*) FILTER (WHERE status = 'processed')::int, count(*) FILTER (WHERE status = 'pending')::int,
                    count(*) FILTER (WHERE status = 'error')::int
                FROM responses
                """, in: platform.responseDatabase)
        } until: { $0[0] >= acknowledged && $0[1] == $0[0] }
        let delivered = Set(await target.deliveries.map(\.responseId))
        #expect(delivered.count == responses[0], "the target saw \(delivered.count) of \(responses[0])")

        let accounts = tally.accounts
        try await eventually("every verification e-mail sent", within: .seconds(60)) {
            try await Self.counts(
                "SELECT count(*)::int, count(*) FILTER (WHERE sent_at IS NOT NULL)::int FROM mail_outbox",
                in: platform.registrationDatabase)
        } until: { $0[0] >= accounts.count && $0[1] == $0[0] }
        // At least once: a message whose sending was done but not yet recorded when the
        // connection went is sent again.
        #expect(accounts.count > 0)
        for account in accounts {
            #expect(try Platform.codes(in: platform.mailDirectory, to: account).count >= 1, "\(account) got no code")
        }

        // Both announcements reached registration (the first may have found no device yet: it
        // went out as the load began), the second was queued for the devices that signed up
        // during the load, and every push is settled.
        // [announcements received, pushes of the second, pushes in all, settled]
        let pushes = try await eventually("both announcements received and every push settled", within: .seconds(120)) {
            try await Self.counts(
                """
                SELECT (SELECT count(DISTINCT notification_id) FROM received_notifications
                        WHERE notification_id IN ('before', 'after'))::int,
                    count(*) FILTER (WHERE n.notification_id = 'after')::int, count(*)::int,
                    count(*) FILTER (WHERE p.sent_at IS NOT NULL OR p.gave_up_at IS NOT NULL)::int
                FROM push_outbox p JOIN received_notifications n ON n.id = p.notification_id
                """, in: platform.registrationDatabase)
        } until: { $0[0] == 2 && $0[1] > 0 && $0[2] == $0[3] }
        #expect(pushes[1] > 0)

        // study-metadata sent the announcements (and more) to registration; nothing is left anywhere.
        for database in [platform.metadataDatabase, platform.registrationDatabase, platform.responseDatabase] {
            try await eventually("every internal call delivered", within: .seconds(60)) {
                try await Self.counts(
                    "SELECT count(*)::int, count(*) FILTER (WHERE delivered_at IS NOT NULL)::int FROM internal_outbox",
                    in: database)
            } until: { ($0[0] > 0 || database != platform.metadataDatabase) && $0[1] == $0[0] }
        }
        let notifications = try await Self.counts(
            """
            SELECT count(*)::int, count(*) FILTER (WHERE sent_at IS NOT NULL)::int FROM notifications
            WHERE notification_id IN ('before', 'after')
            """, in: platform.metadataDatabase)
        #expect(notifications == [2, 2])
    }

    /// The integers of a query's one row, on `database`.
    static func counts(_ query: PostgresQuery, in database: String) async throws -> [Int] {
        try await TestDatabase.withClient(url: database) { postgres, logger in
            try await counts(query, on: postgres, logger)
        }
    }

    /// The integers of a query's one row.
    static func counts(_ query: PostgresQuery, on postgres: PostgresClient, _ logger: Logger) async throws -> [Int] {
        let rows = try await postgres.query(query, logger: logger)
        var values: [Int] = []
        for try await row in rows {
            values = try row.map { try $0.decode(Int.self) }
        }
        return values
    }
}
