import Foundation
import Logging
import ServiceKit

/// Sends queued e-mail through the configured transport, as a work queue: retried with backoff
/// (2 s doubling to 15 minutes, with jitter) up to `maxAttempts`; a permanent refusal is given up
/// at once. Replicas share the queue through `SKIP LOCKED`.
package struct MailWorker: WorkQueue {
    /// Writers notify this channel in the transaction that queues a message.
    package static let channel = "studystack_queue_mail"
    package let queueName = "mail"

    package let outbox: MailOutbox
    package let transport: any MailTransport
    package let maxAttempts: Int
    package let metrics: ServiceMetrics
    package let logger: Logger

    package init(
        outbox: MailOutbox, transport: any MailTransport, maxAttempts: Int, metrics: ServiceMetrics, logger: Logger
    ) {
        self.outbox = outbox
        self.transport = transport
        self.maxAttempts = maxAttempts
        self.metrics = metrics
        self.logger = logger
    }

    /// A round sends at most 10 messages within `roundDeadline`; their lease outlasts it, so no
    /// other replica takes them while they are being sent, and is short, so messages claimed
    /// just before PostgreSQL went away (their claim committed, their outcome never recorded) are
    /// sent again within a minute of its return.
    package var policy: DrainPolicy { DrainPolicy(batchSize: 10, lease: .seconds(45), retry: RetryPolicy(maxAttempts: maxAttempts)) }
    package static let roundDeadline: Duration = .seconds(30)

    package func claim(limit: Int, lease: Duration) async throws -> [MailOutbox.Queued] {
        try await outbox.claim(batch: limit, lease: lease)
    }

    package func attempts(of queued: MailOutbox.Queued) -> Int { queued.attempts }

    /// `done` carries where the transport delivered it.
    package func perform(_ queued: MailOutbox.Queued) async -> WorkResult<String> {
        do {
            return .done(try await transport.deliver(queued.message, messageId: queued.messageId))
        } catch {
            let reason = "\(queued.kind): \(String(describing: error).prefix(300))"
            return (error as? MailDeliveryError)?.permanent == true ? .rejected(reason) : .failed(reason)
        }
    }

    package func complete(_ queued: MailOutbox.Queued, with deliveredTo: String) async throws {
        try await outbox.markSent(id: queued.id, deliveredTo: deliveredTo)
    }

    package func fail(_ queued: MailOutbox.Queued, reason: String, retryAfter: Duration?) async throws {
        try await outbox.markFailed(id: queued.id, error: reason, retryAfter: retryAfter)
    }
}
