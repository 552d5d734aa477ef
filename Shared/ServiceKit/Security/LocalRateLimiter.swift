import Foundation
import Synchronization

/// Counts requests per key in one-minute windows in this process's memory, with the same sliding
/// estimate as `RateLimiter` (the current window plus the share of the previous one still inside
/// the minute). For a route that takes thousands of requests a second and needs a bound on floods,
/// not an exact count across replicas: `RateLimiter` spends a database write on every request,
/// this spends none. With N replicas behind a balancer a key gets up to N times the allowance.
public final class LocalRateLimiter: Sendable {
    private struct Count {
        var window: Int64
        var current: Int
        var previous: Int
    }

    public let perMinute: Int
    /// Keys kept at most; past it, keys idle for two windows are dropped first, then all.
    public let maxKeys: Int
    private let counts = Mutex<[String: Count]>([:])

    public init(perMinute: Int, maxKeys: Int = 100_000) {
        self.perMinute = perMinute
        self.maxKeys = maxKeys
    }

    /// Counts one request from `key`; false when it is over the allowance for the sliding minute.
    public func allow(_ key: String, now: Date = Date()) -> Bool {
        let seconds = now.timeIntervalSince1970
        let window = Int64((seconds / 60).rounded(.down))
        let elapsed = seconds - Double(window) * 60
        return counts.withLock { counts in
            if counts.count >= maxKeys, counts[key] == nil {
                counts = counts.filter { $0.value.window >= window - 1 }
                if counts.count >= maxKeys { counts.removeAll(keepingCapacity: true) }
            }
            var count = counts[key] ?? Count(window: window, current: 0, previous: 0)
            if count.window != window {
                count = Count(window: window, current: 0, previous: count.window == window - 1 ? count.current : 0)
            }
            count.current += 1
            counts[key] = count
            return Double(count.current) + Double(count.previous) * (1 - elapsed / 60) <= Double(perMinute)
        }
    }
}
