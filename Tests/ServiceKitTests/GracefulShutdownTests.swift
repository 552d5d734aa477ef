import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import ServiceLifecycle
import Testing
import TestSupport

/// SIGTERM's path: graceful shutdown lets a request in flight finish, then the pool closes.
@Suite(.needsCluster) struct GracefulShutdownTests {
    @Test func inFlightRequestFinishesThenThePoolCloses() async throws {
        try await TestDatabase.withFreshDatabase { url in
            let database = String(URLComponents(string: url)!.path.dropFirst())
            let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
            let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
            let app = try makeApp(
                databaseURL: url,
                addRoutes: { routes, _ in
                    routes.router.get("/admin/v1/slow") { _, _ -> String in
                        startedContinuation.yield()
                        try await Task.sleep(for: .milliseconds(800))
                        return "finished"
                    }
                    return []
                },
                onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
            let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "shutdown-test")))

            var portIterator = ports.makeAsyncIterator()
            let base = try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let port = try #require(await portIterator.next())
                let base = "http://127.0.0.1:\(port)"
                try await waitUntilReady(base)

                async let slow = HTTPClient.shared.execute(HTTPClientRequest(url: base + "/admin/v1/slow"), timeout: .seconds(10))
                var startedIterator = started.makeAsyncIterator()
                _ = await startedIterator.next()
                await group.triggerGracefulShutdown()

                let response = try await slow
                #expect(response.status == .ok)
                #expect(String(buffer: try await response.body.collect(upTo: 1024)) == "finished")
                try await tasks.waitForAll()
                return base
            }

            // The group has returned: the server is closed and no connection to the database remains.
            await #expect(throws: (any Error).self) {
                _ = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/healthz"), timeout: .seconds(2))
            }
            // The pool has closed its connections; a PostgreSQL backend leaves pg_stat_activity a
            // moment after its client hung up, so this waits (with a deadline) for it to go.
            let remaining = try await eventually("no connection left to \(database)", within: .seconds(10)) {
                try await TestDatabase.withAdminClient { client, logger in
                    let rows = try await client.query(
                        "SELECT count(*)::int FROM pg_stat_activity WHERE datname = \(database)", logger: logger)
                    var count = -1
                    for try await value in rows.decode(Int.self) { count = value }
                    return count
                }
            } until: { $0 == 0 }
            #expect(remaining == 0)
        }
    }

    private func waitUntilReady(_ base: String) async throws {
        try await eventually("\(base)/readyz answering 200", within: .seconds(30), poll: .milliseconds(50)) {
            try? await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/readyz"), timeout: .seconds(5)).status
        } until: { $0 == .ok }
    }
}
