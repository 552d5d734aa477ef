import Foundation
import Synchronization
import HTTPTypes
import HummingbirdTesting
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// `/readyz` follows the database: 503 while it is unreachable, 200 again once it returns,
/// without restarting the service.
@Suite(.needsCluster) struct ReadinessTests {
    @Test func readinessFollowsTheDatabaseWithoutARestart() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let database = String(URLComponents(string: url)!.path.dropFirst())
            let app = try makeApp(databaseURL: url)
            try await app.test(.router) { client in
                try await TestApplication.waitUntilReady(client)
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }

                // The database stops accepting connections and drops the ones it has.
                try await TestDatabase.setAcceptingConnections(false, database: database)
                let down = try await poll(client, until: .serviceUnavailable)
                #expect(down.ready == false)
                #expect(down.reason?.contains("database") == true)
                // The process is still up.
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }

                try await TestDatabase.setAcceptingConnections(true, database: database)
                let up = try await poll(client, until: .ok)
                #expect(up.ready == true)
                #expect(up.reason == nil)
            }
        }
    }

    @Test func reportsPendingMigrationsAsNotReady() async throws {
        try await TestDatabase.withFreshDatabase { url in
            // Apply only ServiceKit's migrations, then ask a binary that has one more.
            _ = try await TestDatabase.withClient(url: url) { client, logger in
                try await Migrator(client: client, migrations: ServiceKitMigrations.all, logger: logger).migrate()
            }
            let extra = Migration(component: "test", version: 1, name: "later", statements: ["SELECT 1"])
            try await TestDatabase.withClient(url: url) { client, logger in
                let probe = ReadinessProbe(
                    service: .response,
                    migrator: try Migrator(client: client, migrations: ServiceKitMigrations.all + [extra], logger: logger),
                    logger: logger)
                let report = await probe.check()
                #expect(report.ready == false)
                #expect(report.pendingMigrations == ["test/0001_later"])
            }
        }
    }

    /// Polls `/readyz` until it answers `status`, for at most 30 seconds.
    private func poll(_ client: some TestClientProtocol, until status: HTTPResponse.Status) async throws -> ReadinessReport {
        try await eventually("/readyz answering \(status)", within: .seconds(30)) {
            try await client.execute(uri: "/readyz", method: .get) {
                ($0.status, try $0.body.decodeJSON(ReadinessReport.self))
            }
        } until: { $0.0 == status }.1
    }
}

/// `withDeadline` answers at its deadline even when the operation ignores cancellation, as a
/// connection pool waiting for a database that accepts no connection can.
@Suite struct DeadlineTests {
    @Test func theDeadlineAnswersBeforeAnOperationThatIgnoresCancellation() async throws {
        let finished = Mutex(false)
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(100)) {
                // A wait that cancellation cannot end.
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().asyncAfter(deadline: .now() + 3) { continuation.resume() }
                }
                finished.withLock { $0 = true }
            }
        }
        #expect(finished.withLock { $0 } == false, "the caller was answered while the operation still ran")
    }

    @Test func aResultOrAnErrorBeforeTheDeadlineIsPassedOn() async throws {
        #expect(try await withDeadline(.seconds(5)) { 42 } == 42)
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await withDeadline(.seconds(5)) { throw Refused() } }
    }
}
