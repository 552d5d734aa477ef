import AdminAuthHTTP
import Configuration
import Foundation
import Logging
import RegistrationCore
import RegistrationHTTP
import ServiceKit
import ServiceKitHTTP
import SMTPClient
import StudyModels

/// Assembly point of the registration service.
public enum RegistrationService: ServiceAssembly {
    public static let descriptor = ServiceDescriptor(
        name: .registration,
        defaultPort: 8082,
        defaultDatabase: "studystack_registration",
        migrations: RegistrationMigrations.all
    )

    /// Builds the application from parsed settings (what `main` does).
    public static func buildApplication(
        reader: ConfigReader, settings: ServiceSettings, logger: Logger, routeCatalog: RouteCatalog?
    ) throws -> ServiceApplication {
        let registration = try RegistrationSettings(reader: reader)
        let hasher = PasswordHasher()
        return try buildServiceApplication(
            descriptor: descriptor, settings: settings, logger: logger,
            errorFormat: { path in UserRegPaths.isRegistrationPath(path) ? .statusMessage : .admin },
            addRoutes: { routes, environment in
                let postgres = environment.postgres
                let sessions = SessionStore(
                    client: postgres, accessDuration: registration.accessDuration,
                    refreshDuration: registration.refreshDuration, pooling: settings.database.pooling, logger: environment.logger)
                let mail = MailOutbox(client: postgres, encryptionKey: registration.encryptionKey, logger: environment.logger)
                let appSettings = AppSettingsStore(client: postgres, audit: environment.audit, logger: environment.logger)
                let templates = MailTemplates(appSettings: appSettings, defaultFrom: registration.mailFrom)
                let accounts = Accounts(
                    client: postgres, participants: AccountStore(client: postgres, logger: environment.logger),
                    sessions: sessions, apps: appSettings, mail: mail, templates: templates,
                    secrets: OneTimeSecrets(encryptionKey: registration.encryptionKey), hasher: hasher,
                    attempts: environment.attempts, audit: environment.audit, settings: registration, logger: environment.logger)
                let rateLimiter = environment.rateLimiter
                let authenticator = ParticipantAuthenticator(sessions: sessions)
                ParticipantAccountRoutes(accounts: accounts, authenticator: authenticator, rateLimiter: rateLimiter).add(to: routes.router)
                SupportRoutes(
                    messages: SupportMessages(
                        client: postgres, templates: templates, mail: mail, audit: environment.audit,
                        logger: environment.logger),
                    appSettings: appSettings, rateLimiter: rateLimiter
                ).add(to: routes.router)
                let states = StudyStateStore(
                    client: postgres, seal: RowSeal.appTokens(encryptionKey: registration.encryptionKey), audit: environment.audit,
                    pooling: settings.database.pooling, logger: environment.logger)
                let profiles = ProfileStore(client: postgres, logger: environment.logger)
                StateRoutes(
                    profiles: profiles,
                    updates: ProfileUpdates(client: postgres, profiles: profiles, logger: environment.logger),
                    states: states, authenticator: authenticator
                ).add(to: routes.router)
                LeavingRoutes(states: states, authenticator: authenticator).add(to: routes.router)
                let consents = ConsentStore(
                    client: postgres,
                    storage: FileConsentStorage(
                        directory: URL(fileURLWithPath: registration.consentDirectory),
                        encryptionKey: registration.encryptionKey),
                    audit: environment.audit, logger: environment.logger)
                ConsentRoutes(
                    consents: consents, studies: StudyDirectory(client: environment.internalClient),
                    authenticator: authenticator, maxPDFBytes: registration.maxConsentPDFBytes
                ).add(to: routes.router)

                let adminAuthenticator = RemoteAdminAuthenticator(client: environment.internalClient)
                AdminParticipantRoutes(
                    directory: ParticipantDirectory(client: postgres, logger: environment.logger), consents: consents,
                    authenticator: adminAuthenticator, audit: environment.audit
                ).add(to: routes.router)
                let runStore = ParticipantRunStore(client: postgres, logger: environment.logger)
                let ledgers = RunLedgerStore(client: postgres, outbox: environment.outbox, logger: environment.logger)
                AdminRunRoutes(
                    runs: ParticipantRuns(store: runStore, studies: StudyDirectory(client: environment.internalClient)),
                    authenticator: adminAuthenticator
                ).add(to: routes.router)
                AdminRunReportRoutes(reports: RunReportStore(client: postgres, logger: environment.logger), authenticator: adminAuthenticator)
                    .add(to: routes.router)
                let sites = SiteStore(client: postgres, audit: environment.audit, logger: environment.logger)
                let invitations = Invitations(
                    client: postgres,
                    store: InvitationStore(
                        client: postgres, seal: .invitationTokens(encryptionKey: registration.encryptionKey),
                        logger: environment.logger),
                    sites: sites, tokens: InvitationTokens(client: environment.internalClient),
                    studies: StudyDirectory(client: environment.internalClient), apps: appSettings, mail: mail,
                    templates: templates, audit: environment.audit, validFor: registration.invitationDuration,
                    logger: environment.logger)
                AdminSiteRoutes(sites: sites, authenticator: adminAuthenticator).add(to: routes.router)
                let pushAudience = PushAudienceStore(client: postgres, audit: environment.audit, logger: environment.logger)
                AdminStudyProgressRoutes(
                    adherence: AdherenceStore(client: postgres, logger: environment.logger), audience: pushAudience,
                    authenticator: adminAuthenticator
                ).add(to: routes.router)
                AdminInvitationRoutes(invitations: invitations, authenticator: adminAuthenticator, audit: environment.audit)
                    .add(to: routes.router)
                InternalInvitationRoutes(invitations: invitations).add(to: routes.internalGroup)
                InternalPropertyDateRoutes(dates: PropertyDateStore(client: postgres, logger: environment.logger))
                    .add(to: routes.internalGroup)
                InternalTestRunRoutes(
                    cleanup: TestRunCleanup(
                        client: postgres, consents: consents.storage, audit: environment.audit, logger: environment.logger)
                ).add(to: routes.internalGroup)
                AppAccountAdminRoutes(
                    users: AppUserDirectory(client: postgres, logger: environment.logger),
                    administration: AccountAdministration(client: postgres, accounts: accounts, logger: environment.logger),
                    authenticator: adminAuthenticator, rateLimiter: rateLimiter, audit: environment.audit
                ).add(to: routes.router)

                InternalNotificationRoutes(audience: pushAudience).add(to: routes.internalGroup)
                InternalAppRoutes(settings: appSettings).add(to: routes.internalGroup)
                let pushCredentials = PushCredentialStore(
                    client: postgres, encryptionKey: registration.encryptionKey, audit: environment.audit,
                    logger: environment.logger)
                InternalPushCredentialRoutes(store: pushCredentials, keys: environment.settings.internalKeys)
                    .add(to: routes.internalGroup)

                let mailWorker = MailWorker(
                    outbox: mail,
                    transport: registration.smtp.map { SMTPMailTransport(client: SMTPClient(configuration: $0)) }
                        ?? FileMailTransport(
                            directory: URL(fileURLWithPath: registration.mailDirectory), logger: environment.logger),
                    maxAttempts: 30, metrics: environment.metrics, logger: environment.logger)
                let pushOutbox = PushOutbox(client: postgres, audit: environment.audit, logger: environment.logger)
                let pushEndpoints = PushWorker.Endpoints(
                    apnsProductionURL: registration.apnsProductionURL, apnsSandboxURL: registration.apnsSandboxURL,
                    fcmURL: registration.fcmURL, trustRootsFile: registration.pushTrustRootsFile)
                // Registered now: the listener takes its channels when it starts.
                let pushWake = environment.changes.wakeSignal(channel: PushWorker.channel)
                let pushWorker = HTTPClientWorker(client: { PushWorker.makeHTTPClient(trustRootsFile: pushEndpoints.trustRootsFile) }) {
                    httpClient in
                    let push = PushWorker(
                        outbox: pushOutbox, credentials: pushCredentials, endpoints: pushEndpoints, httpClient: httpClient,
                        maxAttempts: 30, metrics: environment.metrics, logger: environment.logger)
                    return environment.queueWorker("push", wake: pushWake, timing: .init(roundDeadline: .seconds(90))) {
                        try await push.round()
                    }
                }
                let arrivals = ResponseArrivalStore(client: postgres, logger: environment.logger)
                let feed = ResponseFeed(client: environment.internalClient)
                let sweep = RunLedgerSweep(
                    ledgers: ledgers, participants: runStore, studies: StudyDirectory(client: environment.internalClient),
                    logger: environment.logger)
                let reminders = RunReminders(
                    store: RunReminderStore(client: postgres, audit: environment.audit, logger: environment.logger),
                    studies: StudyDirectory(client: environment.internalClient), logger: environment.logger)
                environment.metrics.watchQueue("mail", query: MailOutbox.table.depthQuery)
                environment.metrics.watchQueue("push", query: PushOutbox.table.depthQuery)
                return [
                    environment.queueWorker(
                        "mail", channel: MailWorker.channel, timing: .init(roundDeadline: MailWorker.roundDeadline)
                    ) { try await mailWorker.round() },
                    pushWorker,
                    // What arrived at the response service, read on every couple of seconds; a page
                    // that brought nothing new waits for the next poll.
                    environment.queueWorker("response-feed", timing: .init(pollInterval: .seconds(2))) {
                        let reading = try await arrivals.read { after in try await feed.page(after: after, logger: environment.logger) }
                        // Then what became of those that failed processing.
                        let settled = try await arrivals.readSettlements { after in
                            try await feed.settlements(after: after, logger: environment.logger)
                        }
                        return reading.kept + (reading.moved ? 1 : 0) + settled.kept + (settled.moved ? 1 : 0)
                    },
                    environment.queueWorker("run-ledgers", timing: .init(pollInterval: .seconds(2))) {
                        try await sweep.round()
                    },
                    environment.queueWorker("run-reminders", timing: .init(pollInterval: .seconds(5))) {
                        try await reminders.round()
                    },
                ]
            },
            afterMigrations: { environment in
                let sealed = try await StudyStateStore(
                    client: environment.postgres, seal: RowSeal.appTokens(encryptionKey: registration.encryptionKey),
                    audit: environment.audit, logger: environment.logger
                ).sealLegacy()
                if sealed > 0 { environment.logger.notice("sealed participant ids kept in clear", metadata: ["rows": "\(sealed)"]) }
            },
            routeCatalog: routeCatalog)
    }
}
