import Foundation
import RegistrationCore
import ServiceKit

/// The registration service's stores and use cases shared by its routes
/// (`RegistrationService.mountRoutes`) and its workers (`RegistrationService.workers`), made once
/// per process.
struct RegistrationParts {
    let environment: ServiceEnvironment
    let registration: RegistrationSettings
    let sessions: SessionStore
    let mail: MailOutbox
    let appSettings: AppSettingsStore
    let templates: MailTemplates
    let accounts: Accounts
    let consents: ConsentStore
    let runStore: ParticipantRunStore
    let ledgers: RunLedgerStore
    let pushAudience: PushAudienceStore
    let pushCredentials: PushCredentialStore
    /// Study-metadata, asked about the studies participants name and what they schedule.
    let studies: StudyDirectory
    let hasher: PasswordHasher

    init(environment: ServiceEnvironment, registration: RegistrationSettings, hasher: PasswordHasher) {
        let postgres = environment.postgres
        let logger = environment.logger
        self.environment = environment
        self.registration = registration
        self.hasher = hasher
        sessions = SessionStore(
            client: postgres, accessDuration: registration.accessDuration, refreshDuration: registration.refreshDuration,
            pooling: environment.settings.database.pooling, logger: logger)
        mail = MailOutbox(client: postgres, encryptionKey: registration.encryptionKey, logger: logger)
        appSettings = AppSettingsStore(client: postgres, audit: environment.audit, logger: logger)
        templates = MailTemplates(appSettings: appSettings, defaultFrom: registration.mailFrom)
        let accountStore = AccountStore(client: postgres, logger: logger)
        accounts = Accounts(
            transactions: PostgresAccountWork.transactions(
                client: postgres, accounts: accountStore, sessions: sessions, apps: appSettings, mail: mail,
                attempts: environment.attempts, audit: environment.audit, logger: logger),
            participants: accountStore, sessions: sessions, apps: appSettings,
            secrets: OneTimeSecrets(encryptionKey: registration.encryptionKey), hasher: hasher, attempts: environment.attempts,
            audit: environment.audit, settings: registration)
        consents = ConsentStore(
            client: postgres,
            storage: FileConsentStorage(
                directory: URL(fileURLWithPath: registration.consentDirectory), encryptionKey: registration.encryptionKey),
            audit: environment.audit, logger: logger)
        runStore = ParticipantRunStore(client: postgres, pooling: environment.settings.database.pooling, logger: logger)
        ledgers = RunLedgerStore(client: postgres, outbox: environment.outbox, pooling: environment.settings.database.pooling, logger: logger)
        pushAudience = PushAudienceStore(client: postgres, audit: environment.audit, logger: logger)
        pushCredentials = PushCredentialStore(
            client: postgres, encryptionKey: registration.encryptionKey, audit: environment.audit, logger: logger)
        studies = StudyDirectory(client: environment.internalClient)
    }
}
