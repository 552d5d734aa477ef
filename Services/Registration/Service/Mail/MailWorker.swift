import Foundation
import Logging
import ServiceKit

/// Sends queued e-mail through the configured transport, as a work queue: retried with backoff
/// (2 s doubling to 15 minutes, with jitter) up to `maxAttempts`; a permanent refusal is given up
/// at once. Replicas share the queue through `SKIP LOCKED`.
struct MailWorker: WorkQueue {
    /// Writers notify this channel in the transaction that queues a message.
    static let channel = "studystack_queue_mail"

    let outbox: MailOutbox
    let transport: any MailTransport
    let maxAttempts: Int
    let metrics: ServiceMetrics
    let logger: Logger

    var policy: DrainPolicy { DrainPolicy(batchSize: 20, lease: .seconds(120), retry: RetryPolicy(maxAttempts: maxAttempts)) }

    /// One round of the queue; returns how many messages it claimed.
    @discardableResult
    func sendDue() async throws -> Int {
        try await drain("mail", policy: policy, metrics: metrics, logger: logger)
    }

    func claim(limit: Int, lease: Duration) async throws -> [MailOutbox.Queued] {
        try await outbox.claim(batch: limit, lease: lease)
    }

    func attempts(of queued: MailOutbox.Queued) -> Int { queued.attempts }

    /// `done` carries where the transport delivered it.
    func perform(_ queued: MailOutbox.Queued) async -> WorkResult<String> {
        do {
            return .done(try await transport.deliver(queued.message, messageId: UUID().uuidString.lowercased()))
        } catch {
            let reason = "\(queued.kind): \(String(describing: error).prefix(300))"
            return (error as? MailDeliveryError)?.permanent == true ? .rejected(reason) : .failed(reason)
        }
    }

    func complete(_ queued: MailOutbox.Queued, with deliveredTo: String) async throws {
        try await outbox.markSent(id: queued.id, deliveredTo: deliveredTo)
    }

    func fail(_ queued: MailOutbox.Queued, reason: String, retryAfter: Duration?) async throws {
        try await outbox.markFailed(id: queued.id, error: reason, retryAfter: retryAfter)
    }
}
