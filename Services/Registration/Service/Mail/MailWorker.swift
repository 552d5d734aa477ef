import Foundation
import Logging
import ServiceKit
import ServiceLifecycle

/// Sends queued e-mail through the configured transport with retries and backoff (2 s doubling
/// to 15 minutes with jitter, 30 attempts); a permanent refusal stops at once. Replicas share the queue
/// through `SKIP LOCKED`.
struct MailWorker: Service {
    let outbox: MailOutbox
    let transport: any MailTransport
    let pollInterval: Duration
    let maxAttempts: Int
    /// The backoff every StudyStack outbox uses: 2 s doubling to 15 minutes, with jitter.
    var retry: OutboxWorker.Policy { OutboxWorker.Policy(maxAttempts: maxAttempts) }
    let isReady: @Sendable () -> Bool
    let metrics: ServiceMetrics
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if isReady() {
                    do {
                        while try await sendDue() > 0 {}
                    } catch {
                        logger.warning("mail delivery failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                try await Task.sleep(for: pollInterval)
            }
        }
    }

    /// Tries every due message once; returns how many were claimed.
    @discardableResult
    func sendDue() async throws -> Int {
        let batch = try await outbox.claim(batch: 20, lease: .seconds(120))
        for queued in batch {
            do {
                let where_ = try await transport.deliver(queued.message, messageId: UUID().uuidString.lowercased())
                try await outbox.markSent(id: queued.id, deliveredTo: where_)
                count(queued, outcome: "sent")
            } catch {
                let permanent = (error as? MailDeliveryError)?.permanent ?? false
                let giveUp = permanent || queued.attempts >= maxAttempts
                try await outbox.markFailed(
                    id: queued.id, error: String(describing: error).prefix(300).description,
                    retryAfter: giveUp ? nil : retry.backoff(afterAttempts: queued.attempts))
                count(queued, outcome: giveUp ? "gave_up" : "retry")
                logger.warning(
                    giveUp ? "mail given up" : "mail will be retried",
                    metadata: ["mail_id": "\(queued.id)", "kind": "\(queued.kind)", "attempts": "\(queued.attempts)",
                               "error": "\(error)"])
            }
        }
        return batch.count
    }

    private func count(_ queued: MailOutbox.Queued, outcome: String) {
        metrics.countWorkerOutcome(
            worker: "mail", event: "deliveries", outcome: outcome,
            help: "E-mail delivery attempts by kind and outcome (sent, retry, gave_up).", labels: [("kind", queued.kind)])
    }
}
