import AdminAuthHTTP
import Foundation
import RegistrationCore
import RegistrationHTTP
import ServiceKit
import ServiceKitHTTP

extension RegistrationService {
    /// Every route of the registration service: the apps' account, state and consent calls,
    /// support messages, the admin API, and the internal calls.
    static func mountRoutes(_ parts: RegistrationParts, on routes: ServiceRoutes) {
        let environment = parts.environment
        let postgres = environment.postgres
        let logger = environment.logger
        let registration = parts.registration
        let rateLimiter = environment.rateLimiter

        let authenticator = ParticipantAuthenticator(sessions: parts.sessions)
        ParticipantAccountRoutes(accounts: parts.accounts, authenticator: authenticator, rateLimiter: rateLimiter).add(to: routes.router)
        SupportRoutes(
            messages: SupportMessages(
                mailbox: SupportMailStore(
                    client: postgres, templates: parts.templates, mail: parts.mail, audit: environment.audit, logger: logger)),
            appSettings: parts.appSettings, rateLimiter: rateLimiter
        ).add(to: routes.router)
        let states = StudyStateStore(
            client: postgres, seal: RowSeal.appTokens(encryptionKey: registration.encryptionKey), audit: environment.audit,
            pooling: environment.settings.database.pooling, logger: logger)
        let profiles = ProfileStore(client: postgres, logger: logger)
        let updates = ProfileUpdates(
            transactions: PostgresProfileWork.transactions(client: postgres, profiles: profiles, logger: logger), profiles: profiles)
        StateRoutes(profiles: profiles, updates: updates, states: states, authenticator: authenticator).add(to: routes.router)
        LeavingRoutes(states: states, authenticator: authenticator).add(to: routes.router)
        ConsentRoutes(
            consents: parts.consents, studies: parts.studies, authenticator: authenticator,
            maxPDFBytes: registration.maxConsentPDFBytes
        ).add(to: routes.router)

        let admin = AdminRouter(routes.router, authenticator: RemoteAdminAuthenticator(client: environment.internalClient))
        let participantRoutes = AdminParticipantRoutes(
            directory: ParticipantDirectory(client: postgres, logger: logger), consents: parts.consents, studies: parts.studies,
            audit: environment.audit)
        participantRoutes.add(to: admin)
        let consentReminders = ConsentReminders(
            store: ConsentReminderStore(client: postgres, audit: environment.audit, logger: logger), studies: parts.studies, logger: logger)
        AdminConsentRoutes(reminders: consentReminders, consents: parts.consents, audit: environment.audit).add(to: admin)
        let participantRuns = ParticipantRuns(store: parts.runStore, studies: parts.studies)
        let runReports = RunReportStore(client: postgres, logger: logger)
        AdminRunRoutes(runs: participantRuns).add(to: admin)
        AdminRunReportRoutes(reports: runReports).add(to: admin)
        AdminParticipantRecordRoutes(participants: participantRoutes, runs: participantRuns, reports: runReports).add(to: admin)
        let sites = SiteStore(client: postgres, audit: environment.audit, logger: logger)
        let invitationStore = InvitationStore(
            client: postgres, seal: .invitationTokens(encryptionKey: registration.encryptionKey), logger: logger)
        let invitations = Invitations(
            transactions: PostgresInvitationWork.transactions(
                client: postgres, store: invitationStore, mail: parts.mail, audit: environment.audit, logger: logger),
            store: invitationStore, sites: sites, tokens: InvitationTokens(client: environment.internalClient),
            studies: parts.studies, apps: parts.appSettings, defaultFrom: registration.mailFrom,
            validFor: registration.invitationDuration, logger: logger)
        AdminSiteRoutes(sites: sites).add(to: admin)
        let adherence = AdherenceStore(client: postgres, logger: logger)
        AdminStudyProgressRoutes(adherence: adherence, audience: parts.pushAudience).add(to: admin)
        AdminParticipantsPageRoutes(participants: participantRoutes, reminders: consentReminders, sites: sites, adherence: adherence)
            .add(to: admin)
        AdminInvitationRoutes(invitations: invitations, audit: environment.audit)
            .add(to: admin)
        AppAccountAdminRoutes(
            users: AppUserDirectory(client: postgres, logger: logger),
            administration: AccountAdministration(accounts: parts.accounts),
            rateLimiter: rateLimiter, audit: environment.audit
        ).add(to: admin)

        AdminMoveInRoutes(
            moveIns: ParticipantMoveIns(
                store: MovedParticipantStore(
                    client: postgres, seal: RowSeal.appTokens(encryptionKey: registration.encryptionKey),
                    invitationSeal: .invitationTokens(encryptionKey: registration.encryptionKey), audit: environment.audit, logger: logger),
                registry: ResponseParticipantRegistry(client: environment.internalClient), studies: parts.studies, apps: parts.appSettings,
                storage: parts.consents.storage, hasher: parts.hasher, passwordExpiry: registration.passwordExpiry.timeInterval, logger: logger)
        ).add(to: admin)

        InternalInvitationRoutes(invitations: invitations).add(to: routes.internalGroup)
        InternalPropertyDateRoutes(dates: PropertyDateStore(client: postgres, logger: logger)).add(to: routes.internalGroup)
        InternalTestRunRoutes(
            cleanup: TestRunCleanup(
                records: TestRunStore(client: postgres, audit: environment.audit, logger: logger), consents: parts.consents.storage,
                logger: logger)
        ).add(to: routes.internalGroup)
        InternalNotificationRoutes(audience: parts.pushAudience).add(to: routes.internalGroup)
        InternalConsentRecordRoutes(consents: parts.consents).add(to: routes.internalGroup)
        InternalAppRoutes(settings: parts.appSettings).add(to: routes.internalGroup)
        InternalPushCredentialRoutes(store: parts.pushCredentials, keys: environment.settings.internalKeys)
            .add(to: routes.internalGroup)
    }
}
