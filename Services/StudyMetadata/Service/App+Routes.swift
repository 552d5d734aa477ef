import Configuration
import Foundation
import SageAssessments
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP

extension StudyMetadataService {
    /// Every route of study-metadata: the admin API (sessions, accounts, apps, studies, their
    /// lifecycle, notifications, imports, files, API keys), the apps' study API, the schema
    /// protocols, and the internal calls. `catalog` and `notifications` are shared with the
    /// workers.
    static func mountRoutes(
        on routes: ServiceRoutes, environment: ServiceEnvironment, adminSettings: AdminSettings, hasher: PasswordHasher,
        sageSchemas: SageSchemaSet, catalog: CatalogCache, notifications: NotificationStore
    ) throws {
        let store = AdminStore(client: environment.postgres, logger: environment.logger)
        let authenticator = AdminTokenAuthenticator(store: store)
        AdminSessionRoutes(
            sessions: AdminSessions(
                store: store, hasher: hasher, attempts: environment.attempts, audit: environment.audit,
                settings: adminSettings),
            authenticator: authenticator, rateLimiter: environment.rateLimiter
        ).add(to: routes.router)
        AdminAccountRoutes(
            teams: AdminTeams(store: store, audit: environment.audit, settings: adminSettings), store: store,
            audit: environment.audit, authenticator: authenticator
        ).add(to: routes.router)
        let apps = AppStore(
            client: environment.postgres, catalog: catalog, outbox: environment.outbox, audit: environment.audit,
            logger: environment.logger)
        AppRoutes(administration: AppAdministration(apps: apps), apps: apps, authenticator: authenticator).add(to: routes.router)
        PushCredentialRoutes(
            apps: apps, internalClient: environment.internalClient, authenticator: authenticator,
            audit: environment.audit
        ).add(to: routes.router)
        let studies = StudyStore(client: environment.postgres, audit: environment.audit, logger: environment.logger)
        let editing = DraftEditing(studies: studies, apps: apps)
        StudyDraftRoutes(editing: editing, authenticator: authenticator).add(to: routes.router)
        ActivityImportRoutes(editing: editing, authenticator: authenticator).add(to: routes.router)
        StudyLifecycleRoutes(
            actions: StudyLifecycleActions(
                client: environment.postgres,
                versions: StudyVersionStore(client: environment.postgres, logger: environment.logger),
                audit: environment.audit, outbox: environment.outbox, notifications: notifications,
                catalog: catalog, storage: ResponseStorageRehearsals(internalClient: environment.internalClient),
                logger: environment.logger),
            authenticator: authenticator
        ).add(to: routes.router)
        let queued = StoredNotifications(store: notifications, audit: environment.audit)
        NotificationRoutes(
            announcements: Announcements(notifications: queued, apps: apps),
            messages: StudyMessages(studies: studies, notifications: queued), apps: apps, notifications: notifications,
            outbox: environment.outbox, authenticator: authenticator
        ).add(to: routes.router)
        let published = PublishedStudies(client: environment.postgres, catalog: catalog, logger: environment.logger)
        WCPRoutes(
            published: published, apps: apps, notificationStore: notifications,
            authenticator: AppClientAuthenticator(apps: apps)
        ).add(to: routes.router)
        InternalStudyRoutes(published: published).add(to: routes.internalGroup)
        guard let schemaDataURL = adminSettings.schemaDataURL ?? environment.settings.peers[.response] else {
            throw ConfigurationError(AdminSettings.Keys.schemaDataURL, "is needed: the response service's address is not known")
        }
        SchemaProtocolRoutes(published: published, dataURL: schemaDataURL).add(to: routes.router)
        // Where phones reach this service: the schema protocols' and the uploaded files' URLs start with it.
        guard let publicBase = adminSettings.schemaProtocolURL ?? environment.settings.peers[.studyMetadata] else {
            throw ConfigurationError(AdminSettings.Keys.schemaProtocolURL, "is needed: the service's own address is not known")
        }
        SchemaAdminRoutes(
            imports: SchemaProtocolImports(editing: editing), published: published, authenticator: authenticator,
            protocolBase: publicBase, dataBase: schemaDataURL
        ).add(to: routes.router)
        StudyFileRoutes(
            files: StudyFileStore(
                client: environment.postgres, audit: environment.audit, logger: environment.logger, publicBase: publicBase),
            authenticator: authenticator
        ).add(to: routes.router)
        SageAdminRoutes(imports: AssessmentImports(editing: editing, schemas: sageSchemas), authenticator: authenticator)
            .add(to: routes.router)
        let apiKeys = APIKeyStore(client: environment.postgres, audit: environment.audit, logger: environment.logger)
        AdminAPIKeyRoutes(keys: APIKeys(store: apiKeys), store: apiKeys, authenticator: authenticator).add(to: routes.router)
        InternalAdminRoutes(store: store, keys: apiKeys).add(to: routes.internalGroup)
    }
}
