import Foundation
import RegistrationCore
import ServiceKit
import ServiceLifecycle
import SMTPClient

extension RegistrationService {
    /// The registration service's background work: mail, push, the response feed, and the
    /// sweeps over participants' run ledgers and reminders.
    static func workers(_ parts: RegistrationParts) -> [any Service] {
        let environment = parts.environment
        let postgres = environment.postgres
        let logger = environment.logger
        let registration = parts.registration
        let mailWorker = MailWorker(
            outbox: parts.mail,
            transport: registration.smtp.map { SMTPMailTransport(client: SMTPClient(configuration: $0)) }
                ?? FileMailTransport(directory: URL(fileURLWithPath: registration.mailDirectory), logger: logger),
            maxAttempts: 30, metrics: environment.metrics, logger: logger)
        let pushOutbox = PushOutbox(client: postgres, audit: environment.audit, logger: logger)
        let pushEndpoints = PushWorker.Endpoints(
            apnsProductionURL: registration.apnsProductionURL, apnsSandboxURL: registration.apnsSandboxURL,
            fcmURL: registration.fcmURL, trustRootsFile: registration.pushTrustRootsFile)
        // Registered now: the listener takes its channels when it starts.
        let pushWake = environment.changes.wakeSignal(channel: PushWorker.channel)
        let pushWorker = HTTPClientWorker(client: { PushWorker.makeHTTPClient(trustRootsFile: pushEndpoints.trustRootsFile) }) {
            httpClient in
            let push = PushWorker(
                outbox: pushOutbox, credentials: parts.pushCredentials, endpoints: pushEndpoints, httpClient: httpClient,
                maxAttempts: 30, metrics: environment.metrics, logger: logger)
            return environment.queueWorker("push", wake: pushWake, timing: .init(roundDeadline: .seconds(90))) {
                try await push.round()
            }
        }
        let arrivals = ResponseArrivalStore(client: postgres, logger: logger)
        let feed = ResponseFeed(client: environment.internalClient)
        let sweep = RunLedgerSweep(ledgers: parts.ledgers, participants: parts.runStore, studies: parts.studies, logger: logger)
        let reminders = RunReminders(
            store: RunReminderStore(client: postgres, audit: environment.audit, logger: logger), studies: parts.studies,
            logger: logger)
        let consentReminders = ConsentReminders(
            store: ConsentReminderStore(client: postgres, audit: environment.audit, logger: logger), studies: parts.studies,
            logger: logger)
        environment.metrics.watchQueue("mail", query: MailOutbox.table.depthQuery)
        environment.metrics.watchQueue("push", query: PushOutbox.table.depthQuery)
        return [
            environment.queueWorker("mail", channel: MailWorker.channel, timing: .init(roundDeadline: MailWorker.roundDeadline)) {
                try await mailWorker.round()
            },
            pushWorker,
            // What arrived at the response service, read on every couple of seconds; a page
            // that brought nothing new waits for the next poll.
            environment.queueWorker("response-feed", timing: .init(pollInterval: .seconds(2))) {
                let reading = try await arrivals.read { after in try await feed.page(after: after, logger: logger) }
                // Then what became of those that failed processing.
                let settled = try await arrivals.readSettlements { after in try await feed.settlements(after: after, logger: logger) }
                return reading.kept + (reading.moved ? 1 : 0) + settled.kept + (settled.moved ? 1 : 0)
            },
            environment.queueWorker("run-ledgers", timing: .init(pollInterval: .seconds(2))) { try await sweep.round() },
            environment.queueWorker("run-reminders", timing: .init(pollInterval: .seconds(5))) { try await reminders.round() },
            environment.queueWorker("consent-reminders", timing: .init(pollInterval: .seconds(5))) {
                try await consentReminders.round()
            },
            // The devices kept for the messages page's audience by the hour their sign-in runs
            // out: the changes the phones wrote are added up every few seconds (the page reads
            // what is not yet added, so the fewer the cheaper), and an hour past, which counts for
            // nothing, goes within seconds of its end. A fold takes everything due at once, so a
            // round never asks for another straight away.
            environment.queueWorker("audience-hours", timing: .init(pollInterval: .seconds(10))) {
                _ = try await parts.pushAudience.foldChanges()
                return 0
            },
        ]
    }
}
