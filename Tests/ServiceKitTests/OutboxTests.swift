import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Synchronization
import Testing
import TestSupport

/// The outbox: messages leave only with their transaction, survive a peer being down, are retried
/// with backoff, given up after the limit, and delivered once even with competing workers.
@Suite(.needsCluster) struct OutboxTests {
    struct Event: Codable, Equatable, InternalPayload {
        var n: Int
    }

    /// What a live receiver got: caller and body of every accepted call, and how many it refused.
    final class Inbox: Sendable {
        let accepted = Mutex<[(caller: String, body: String)]>([])
        /// Calls to refuse with 503 before accepting.
        let refusals = Atomic<Int>(0)
        /// Calls being answered now, and the most there were at once.
        let inFlight = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
    }

    /// Runs `body` with a live receiver (the response service's key and middleware,
    /// `POST /internal/v1/inbox`) and a client for a second, migrated database holding the outbox.
    /// The receiver's database is its own: its built-in outbox worker must not compete for the
    /// messages under test.
    func withReceiver(
        _ body: @escaping @Sendable (_ client: PostgresClient, _ receiverURL: URL, _ inbox: Inbox, _ logger: Logger) async throws -> Void
    ) async throws {
        try await TestDatabase.withFreshDatabase { receiverDatabase in
            let inbox = Inbox()
            let app = try makeApp(
                databaseURL: receiverDatabase, service: .response,
                addRoutes: { routes, _ in
                    routes.internalGroup.post("/v1/inbox") { request, context -> Response in
                        if inbox.refusals.load(ordering: .relaxed) > 0 {
                            inbox.refusals.subtract(1, ordering: .relaxed)
                            return Response(status: .serviceUnavailable)
                        }
                        let now = inbox.inFlight.add(1, ordering: .relaxed).newValue
                        defer { inbox.inFlight.subtract(1, ordering: .relaxed) }
                        inbox.mostAtOnce.max(now, ordering: .relaxed)
                        // A slow peer: each call is answered once another is in flight too, or
                        // after half a second (well inside the client's timeout) when none comes.
                        let until = ContinuousClock.now + .milliseconds(500)
                        while inbox.mostAtOnce.load(ordering: .relaxed) < 2 && ContinuousClock.now < until {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        let bytes = try await request.body.collect(upTo: context.maxUploadSize)
                        inbox.accepted.withLock { $0.append((context.internalCaller ?? "-", String(buffer: bytes))) }
                        return Response(status: .accepted)
                    }
                    return []
                })
            try await app.test(.live) { testClient in
                try await TestApplication.waitUntilReady(testClient)
                try await TestDatabase.withFreshDatabase { url in
                    try await TestDatabase.withClient(url: url) { client, logger in
                        _ = try await Migrator(client: client, migrations: ServiceKitMigrations.all, logger: logger).migrate()
                        try await body(client, URL(string: "http://127.0.0.1:\(testClient.port!)")!, inbox, logger)
                    }
                }
            }
        }
    }

    func worker(
        _ client: PostgresClient, peer: URL, policy: DrainPolicy = OutboxWorker.policy(firstBackoff: .zero), logger: Logger
    ) throws -> OutboxWorker {
        let keys = try InternalKeys(ownName: .studyMetadata, signingKey: TestConfiguration.keys[.studyMetadata]!, callerKeys: nil)
        // A short deadline: async-http-client keeps retrying a refused connection until it ends.
        return OutboxWorker(
            client: client, internalClient: InternalClient(keys: keys, peers: [.response: peer], timeout: .seconds(1)),
            metrics: ServiceMetrics(), policy: policy, logger: logger)
    }

    func enqueue(_ n: Int, _ client: PostgresClient, _ logger: Logger) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await Outbox(client: client, logger: logger).enqueue(Self.inbox, payload: Event(n: n), on: connection)
        }
    }

    /// The test receiver's endpoint.
    static let inbox = InternalEndpoint<Event, NoContent>(
        .POST, "/internal/v1/inbox", receiver: .response, callers: [.studyMetadata], purpose: "sends test events")

    /// An address nothing listens on: the peer is down.
    static let downPeer = URL(string: "http://127.0.0.1:9")!

    @Test func aRolledBackTransactionSendsNothing() async throws {
        try await withReceiver { client, receiver, inbox, logger in
            struct Abort: Error {}
            await #expect(throws: PostgresTransactionError.self) {
                try await client.withTransaction(logger: logger) { connection in
                    try await Outbox(client: client, logger: logger).enqueue(Self.inbox, payload: Event(n: 1), on: connection)
                    throw Abort()
                }
            }
            let claimed = try await worker(client, peer: receiver, logger: logger).round()
            #expect(claimed == 0)
            let queued = try await Outbox(client: client, logger: logger).recent()
            #expect(queued.isEmpty)
            #expect(inbox.accepted.withLock { $0.isEmpty })
        }
    }

    @Test func aMessageWaitsForItsPeerAndIsDeliveredOnceSigned() async throws {
        try await withReceiver { client, receiver, inbox, logger in
            try await enqueue(7, client, logger)
            let outbox = Outbox(client: client, logger: logger)

            // The peer is down: the attempt is recorded with its error, nothing is lost.
            let down = try worker(client, peer: Self.downPeer, logger: logger)
            #expect(try await down.round() == 1)
            var pending = try await outbox.undelivered()
            #expect(pending.count == 1)
            #expect(pending[0].attempts == 1)
            #expect(pending[0].lastError != nil)

            // The peer is up but refuses once (503): retried.
            inbox.refusals.store(1, ordering: .relaxed)
            let live = try worker(client, peer: receiver, logger: logger)
            #expect(try await live.round() == 1)
            pending = try await outbox.undelivered()
            #expect(pending.first?.attempts == 2)
            #expect(pending.first?.lastError?.contains("503") == true)

            // Then it accepts: delivered, signed as study-metadata, exactly once.
            #expect(try await live.round() == 1)
            #expect(try await outbox.undelivered().isEmpty)
            #expect(try await live.round() == 0)
            let accepted = inbox.accepted.withLock { $0 }
            #expect(accepted.count == 1)
            #expect(accepted.first?.caller == "study-metadata")
            #expect(try JSONDecoder().decode(Event.self, from: Data(accepted[0].body.utf8)) == Event(n: 7))
            #expect(try await outbox.recent().first?.deliveredAt != nil)
        }
    }

    @Test func backoffKeepsAFailedMessageBackAndTheLimitGivesUp() async throws {
        try await withReceiver { client, _, _, logger in
            try await enqueue(1, client, logger)
            let outbox = Outbox(client: client, logger: logger)
            // With a real backoff the message is not due again straight away.
            let patient = try worker(client, peer: Self.downPeer, policy: OutboxWorker.policy(firstBackoff: .seconds(60)), logger: logger)
            #expect(try await patient.round() == 1)
            #expect(try await patient.round() == 0)

            try await client.query("UPDATE internal_outbox SET next_attempt_at = now()", logger: logger)
            let limited = try worker(client, peer: Self.downPeer, policy: OutboxWorker.policy(maxAttempts: 3, firstBackoff: .zero), logger: logger)
            #expect(try await limited.round() == 1)
            #expect(try await limited.round() == 1)
            #expect(try await limited.round() == 0)
            let message = try #require(try await outbox.undelivered().first)
            #expect(message.attempts == 3)
            #expect(message.gaveUpAt != nil)
            #expect(message.lastError != nil)
        }
    }

    @Test func anUnreachablePeerIsTriedOncePerBatch() async throws {
        try await withReceiver { client, _, _, logger in
            for n in 1...3 { try await enqueue(n, client, logger) }
            let down = try worker(client, peer: Self.downPeer, policy: OutboxWorker.policy(firstBackoff: .zero, atOnce: 1), logger: logger)
            #expect(try await down.round() == 3)
            let pending = try await Outbox(client: client, logger: logger).undelivered()
            #expect(pending.map(\.attempts) == [1, 1, 1])
            #expect(pending.dropFirst().allSatisfy { $0.lastError == "not tried: response was unreachable" })
        }
    }

    /// Eight at once: a down peer costs a batch one wave of tries, not one try per message.
    @Test func anUnreachablePeerCostsABatchOneWave() async throws {
        try await withReceiver { client, _, _, logger in
            for n in 1...20 { try await enqueue(n, client, logger) }
            let down = try worker(client, peer: Self.downPeer, logger: logger)
            #expect(try await down.round() == 20)
            let pending = try await Outbox(client: client, logger: logger).undelivered()
            #expect(pending.count == 20)
            #expect(pending.allSatisfy { $0.attempts == 1 })
            let notTried = pending.filter { $0.lastError == "not tried: response was unreachable" }.count
            #expect(notTried >= 20 - OutboxWorker.policy().atOnce)
        }
    }

    @Test func aBatchGoesToASlowPeerSeveralAtOnce() async throws {
        try await withReceiver { client, receiver, inbox, logger in
            for n in 0..<16 { try await enqueue(n, client, logger) }
            let sender = try worker(client, peer: receiver, logger: logger)
            #expect(try await sender.round() == 16)
            let numbers = try inbox.accepted.withLock { $0 }.map { try JSONDecoder().decode(Event.self, from: Data($0.body.utf8)).n }
            #expect(numbers.sorted() == Array(0..<16))
            #expect(inbox.mostAtOnce.load(ordering: .relaxed) >= 2)
            #expect(try await Outbox(client: client, logger: logger).undelivered().isEmpty)
        }
    }

    /// The delivered messages kept for a week are not read by a claim: it takes the waiting ones
    /// through their own index, however many were delivered before them. The statistics are the
    /// queue's as a backlog left them (analysed while 20,000 waited, then all delivered): the
    /// planner then walked the primary key from the oldest message, delivered or not.
    @Test func aClaimReadsOnlyTheWaitingMessages() async throws {
        try await withReceiver { client, _, _, logger in
            try await client.query(
                """
                INSERT INTO internal_outbox (peer, method, path, body)
                SELECT 'response', 'POST', '/internal/v1/inbox', '\\x7b7d'::bytea FROM generate_series(1, 20000)
                """, logger: logger)
            try await client.query("ANALYZE internal_outbox", logger: logger)
            try await client.query("UPDATE internal_outbox SET delivered_at = now()", logger: logger)
            for n in 1...3 { try await enqueue(n, client, logger) }
            var claim = Outbox.table.claim(returning: "q.peer", limit: 20, lease: .seconds(60))
            claim.sql = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + claim.sql
            var plan: [String] = []
            for try await line in try await client.query(claim, logger: logger).decode(String.self) { plan.append(line) }
            let removed = plan.compactMap { line -> Int? in
                guard let label = line.range(of: "Rows Removed by Filter: ") else { return nil }
                return Int(line[label.upperBound...])
            }
            #expect(plan.joined().contains("internal_outbox_waiting"), "\(plan.joined(separator: "\n"))")
            #expect(removed.reduce(0, +) < 100, "\(plan.joined(separator: "\n"))")
            let claimed = try await Outbox(client: client, logger: logger).undelivered()
            #expect(claimed.count == 3)
            #expect(claimed.allSatisfy { $0.attempts == 1 })
        }
    }

    /// A message queued without waking the workers notifies nobody when its transaction commits;
    /// `wakeWorkers()` notifies once. Notifications arrive in the order their transactions commit,
    /// so all that came before a last, marked one have arrived with it.
    @Test func aMessageQueuedWithoutWakingWaitsForTheWake() async throws {
        try await withReceiver { client, _, _, logger in
            let outbox = Outbox(client: client, logger: logger)
            let heard = try await client.withConnection { listener in
                try await listener.listen(on: Outbox.channel) { notifications in
                    for n in 1...3 {
                        try await client.withTransaction(logger: logger) { connection in
                            try await outbox.enqueue(Self.inbox, payload: Event(n: n), wakingWorkers: false, on: connection)
                        }
                    }
                    try await outbox.wakeWorkers()
                    try await client.query("SELECT pg_notify(\(Outbox.channel), 'last')", logger: logger)
                    var heard: [String] = []
                    for try await notification in notifications {
                        heard.append(notification.payload)
                        if notification.payload == "last" { break }
                    }
                    return heard
                }
            }
            #expect(heard == ["", "last"])
            #expect(try await outbox.undelivered().count == 3)
        }
    }

    @Test func competingWorkersDeliverEachMessageOnce() async throws {
        try await withReceiver { client, receiver, inbox, logger in
            for n in 0..<60 { try await enqueue(n, client, logger) }
            let workers = try (0..<3).map { _ in try worker(client, peer: receiver, policy: OutboxWorker.policy(batchSize: 7, firstBackoff: .zero), logger: logger) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in workers {
                    group.addTask { while try await worker.round() > 0 {} }
                }
                try await group.waitForAll()
            }
            let numbers = try inbox.accepted.withLock { $0 }.map { try JSONDecoder().decode(Event.self, from: Data($0.body.utf8)).n }
            #expect(numbers.sorted() == Array(0..<60))
            let left = try await Outbox(client: client, logger: logger).undelivered()
            #expect(left.isEmpty)
        }
    }
}
