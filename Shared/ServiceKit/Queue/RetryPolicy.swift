import Foundation

/// When a failed item of a work queue is tried again, and when it is given up.
///
/// The wait doubles from `firstBackoff` up to `maxBackoff`, with ±20% jitter so that items that
/// failed together do not retry together. An item is given up once it has been tried
/// `maxAttempts` times (nil: never, for work whose owner watches it, such as forwarding).
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int?
    public var firstBackoff: Duration
    public var maxBackoff: Duration

    public init(maxAttempts: Int?, firstBackoff: Duration = .seconds(2), maxBackoff: Duration = .seconds(15 * 60)) {
        self.maxAttempts = maxAttempts
        self.firstBackoff = firstBackoff
        self.maxBackoff = maxBackoff
    }

    /// The wait before attempt `attempts + 1`.
    public func backoff(afterAttempts attempts: Int) -> Duration {
        let first = Self.seconds(firstBackoff)
        let base = first * pow(2, Double(min(max(attempts - 1, 0), 30)))
        let capped = min(base, Self.seconds(maxBackoff))
        return .milliseconds(Int64(capped * 1000 * Double.random(in: 0.8...1.2)))
    }

    /// What becomes of an item whose attempt number `attempts` failed.
    public func afterFailure(attempts: Int, permanent: Bool) -> Settlement {
        if permanent { return .giveUp }
        if let maxAttempts, attempts >= maxAttempts { return .giveUp }
        return .retry(after: backoff(afterAttempts: attempts))
    }

    public enum Settlement: Sendable, Equatable {
        case retry(after: Duration)
        case giveUp
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

extension Duration {
    /// Seconds as a float, for `make_interval(secs => ...)`.
    public var inSeconds: Double { RetryPolicy.seconds(self) }
}
