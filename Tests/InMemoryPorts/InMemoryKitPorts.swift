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

/// Tries at secrets counted in memory as `AttemptCounter` counts them: each try counted before
/// the secret is checked, the try that reaches the policy's count locks the subject (a success
/// clears it), and a locked subject's tries are refused uncounted until the lock ends.
package final class InMemoryAttempts: SecretAttempts, Sendable {
    private struct Count {
        var attempts = 0
        var lockedUntil: Date?
    }

    private let counts = Mutex<[String: Count]>([:])
    private let now: @Sendable () -> Date

    package init(now: @escaping @Sendable () -> Date = Date.init) {
        self.now = now
    }

    package func begin(_ subject: String, policy: AttemptCounter.Policy) async throws -> AttemptCounter.Admission {
        let now = now()
        return counts.withLock { counts in
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
    }

    package func succeeded(_ subject: String) async throws {
        _ = counts.withLock { $0.removeValue(forKey: subject) }
    }
}
