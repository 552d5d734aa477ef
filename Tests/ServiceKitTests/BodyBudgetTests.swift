import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ServiceKit
import ServiceKitHTTP
import Synchronization
import Testing

/// Large request bodies held at once in one process are bounded (docs/security.md, Budgets):
/// many clients each sending the largest body cannot add them up past the process's memory.
@Suite struct BodyBudgetTests {
    static let limit = 2 << 20

    /// Two bodies of 1.5 MiB are held by a route that waits; with 3 MiB of budget a third large
    /// body is refused at once with 503 `busy` and `Retry-After`, while a small one passes; once
    /// the two are answered, the budget is whole again and the large one is taken.
    @Test func largeBodiesPastTheBudgetWaitForRoomWhileSmallOnesPass() async throws {
        let budget = BodyBudget(capacity: 3 << 20)
        let open = Mutex(false)
        let router = Router(context: ServiceRequestContext.self)
        router.addMiddleware {
            ErrorMiddleware(format: { _ in .admin })
            BodyLimitMiddleware(limit: Self.limit, budget: budget)
        }
        router.post("/held") { request, _ -> String in
            let body = try await request.body.collect(upTo: Self.limit)
            let deadline = ContinuousClock.now + .seconds(30)
            while !open.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            return "\(body.readableBytes)"
        }
        router.post("/quick") { request, _ -> String in
            "\(try await request.body.collect(upTo: Self.limit).readableBytes)"
        }
        let large = ByteBuffer(repeating: 1, count: 3 << 19)
        // Each request with its length, as HTTP clients send it (the router's test client sends
        // no header by itself, and runs requests at once as a server's connections do).
        let declared: HTTPFields = [.contentLength: "\(3 << 19)"]
        try await Application(router: router).test(.router) { client in
            async let first = client.execute(uri: "/held", method: .post, headers: declared, body: large) { $0.status }
            async let second = client.execute(uri: "/held", method: .post, headers: declared, body: large) { $0.status }
            let deadline = ContinuousClock.now + .seconds(30)
            while budget.inUse < 3 << 20, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(budget.inUse == 3 << 20, "both large bodies are held")

            let refused = try await client.execute(uri: "/quick", method: .post, headers: declared, body: large) { ($0.status, $0.headers[.retryAfter], String(buffer: $0.body)) }
            #expect(refused.0 == .serviceUnavailable)
            #expect(refused.1 == "5")
            #expect(refused.2.contains("busy"), "\(refused.2)")
            let small = try await client.execute(
                uri: "/quick", method: .post, headers: [.contentLength: "4096"], body: ByteBuffer(repeating: 1, count: 4_096)) { $0.status }
            #expect(small == .ok, "a small body is not counted")

            open.withLock { $0 = true }
            #expect(try await first == .ok)
            #expect(try await second == .ok)
            #expect(budget.inUse == 0)
            let taken = try await client.execute(uri: "/quick", method: .post, headers: declared, body: large) { ($0.status, String(buffer: $0.body)) }
            #expect(taken.0 == .ok)
            #expect(taken.1 == "\(3 << 19)")
        }
    }

    @Test func theBudgetCountsOnlyLargeBodiesAndNeverGoesPastItsCapacity() {
        let budget = BodyBudget(capacity: 1 << 20)
        #expect(budget.take(BodyBudget.uncounted))
        #expect(budget.inUse == 0)
        #expect(budget.take(600 << 10))
        #expect(!budget.take(600 << 10))
        #expect(budget.inUse == 600 << 10)
        budget.give(600 << 10)
        #expect(budget.inUse == 0)
        #expect(!budget.take(2 << 20), "a body larger than the whole budget is never taken")
        #expect(BodyBudget.capacity(maxBodySize: 8 << 20) == 128 << 20)
        #expect(BodyBudget.capacity(maxBodySize: 100 << 20) == 200 << 20)
    }
}
