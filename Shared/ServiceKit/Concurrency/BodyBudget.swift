import Synchronization

/// The bytes that the bodies of the requests a process is handling may hold together
/// (docs/security.md, Budgets). The body limit bounds one body; this bounds how many of the large
/// ones are held at once, so that many clients each sending the largest body cannot add them up
/// past the process's memory. A body of at most `uncounted` bytes is not counted: every ordinary
/// call of every API is that small, and thousands of them at once hold little.
public final class BodyBudget: Sendable {
    public static let uncounted = 64 * 1024

    /// 128 MiB (sixteen bodies of the default 8 MiB limit), or two of the largest bodies where
    /// the body limit is set above 64 MiB: the largest body is always taken when nothing else is.
    public static func capacity(maxBodySize: Int) -> Int {
        max(128 << 20, 2 * maxBodySize)
    }

    public let capacity: Int
    private let held = Mutex(0)

    public init(capacity: Int) {
        self.capacity = capacity
    }

    /// The counted bytes held now.
    public var inUse: Int { held.withLock { $0 } }

    /// Takes `bytes` for a body about to be read; false, taking nothing, when they do not fit
    /// beside the bodies held. Always true for a body of at most `uncounted` bytes.
    public func take(_ bytes: Int) -> Bool {
        guard bytes > Self.uncounted else { return true }
        return held.withLock { held in
            // `bytes` is at most the body limit (1 GiB), `held` at most `capacity`: no overflow.
            guard bytes <= capacity - held else { return false }
            held += bytes
            return true
        }
    }

    /// Gives back what `take(bytes)` took.
    public func give(_ bytes: Int) {
        guard bytes > Self.uncounted else { return }
        held.withLock { $0 -= bytes }
    }
}
