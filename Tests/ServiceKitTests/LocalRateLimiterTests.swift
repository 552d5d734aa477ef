import Foundation
import ServiceKit
import Testing

/// The in-memory limit on a route too busy to count in the database.
@Suite struct LocalRateLimiterTests {
    @Test func aKeyGetsItsAllowanceAMinuteAndOthersKeepTheirs() {
        let limiter = LocalRateLimiter(perMinute: 3)
        let start = Date(timeIntervalSince1970: 60 * 1_000_000)
        let allowed = (0..<5).map { limiter.allow("a", now: start.addingTimeInterval(Double($0))) }
        #expect(allowed == [true, true, true, false, false])
        #expect(limiter.allow("b", now: start.addingTimeInterval(5)))
        // Early in the next minute most of the last one still counts; a minute on, none of it.
        #expect(!limiter.allow("a", now: start.addingTimeInterval(61)))
        #expect(limiter.allow("a", now: start.addingTimeInterval(125)))
    }

    @Test func keysBeyondTheBoundAreForgottenNotGrown() {
        let limiter = LocalRateLimiter(perMinute: 1, maxKeys: 10)
        let now = Date(timeIntervalSince1970: 60 * 1_000_000)
        for key in 0..<100 { #expect(limiter.allow("k\(key)", now: now)) }
        // The first keys were dropped to make room: they start again.
        #expect(limiter.allow("k0", now: now))
    }
}
