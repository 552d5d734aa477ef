import Foundation
import ServiceKit
import Synchronization

/// The audit log in memory: every event recorded, in order.
package final class InMemoryAudit: AuditTrail, Sendable {
    package struct Event: Sendable, Equatable {
        package var actor: String
        package var action: String
        package var studyId: String?
        package var details: [String: String]
    }

    private let events = Mutex<[Event]>([])

    package init() {}

    package var recorded: [Event] { events.withLock { $0 } }
    package var actions: [String] { recorded.map(\.action) }

    package func record(actor: String, action: String, studyId: String?, studyVersion: Int?, details: [String: String]) async throws {
        events.withLock { $0.append(Event(actor: actor, action: action, studyId: studyId, details: details)) }
    }
}

/// Tries at secrets counted as `AttemptCounter` counts them: each try counted before the secret
/// is checked, the try that reaches the policy's count locks the subject (a success clears it),
/// and a locked subject's tries are refused uncounted until the lock ends. A value, so that state
/// kept for a unit of work (`InMemoryTransactions`) can hold it and roll it back.
package struct AttemptCounts: Sendable {
    private struct Count {
        var attempts = 0
        var lockedUntil: Date?
    }

    private var counts: [String: Count] = [:]

    package init() {}

    package mutating func begin(_ subject: String, policy: AttemptCounter.Policy, now: Date) -> AttemptCounter.Admission {
        var count = counts[subject] ?? Count()
        if let until = count.lockedUntil {
            if until > now { return .locked(until: until) }
            count = Count()
        }
        count.attempts += 1
        if count.attempts >= policy.maxAttempts {
            count.lockedUntil = now.addingTimeInterval(TimeInterval(policy.lockFor.components.seconds))
        }
        counts[subject] = count
        return .allowed(isLast: count.attempts >= policy.maxAttempts)
    }

    package mutating func succeeded(_ subject: String) {
        counts.removeValue(forKey: subject)
    }

    package func lockedUntil(_ subject: String, now: Date) -> Date? {
        counts[subject]?.lockedUntil.flatMap { $0 > now ? $0 : nil }
    }
}

/// Tries at secrets counted in memory (`AttemptCounts`), for a use case whose other writes do
/// not share a transaction with them.
package final class InMemoryAttempts: SecretAttempts, Sendable {
    private let counts = Mutex(AttemptCounts())
    private let now: @Sendable () -> Date

    package init(now: @escaping @Sendable () -> Date = Date.init) {
        self.now = now
    }

    package func begin(_ subject: String, policy: AttemptCounter.Policy) async throws -> AttemptCounter.Admission {
        let now = now()
        return counts.withLock { $0.begin(subject, policy: policy, now: now) }
    }

    package func succeeded(_ subject: String) async throws {
        counts.withLock { $0.succeeded(subject) }
    }

    package func lockedUntil(_ subject: String) async throws -> Date? {
        let now = now()
        return counts.withLock { $0.lockedUntil(subject, now: now) }
    }
}
