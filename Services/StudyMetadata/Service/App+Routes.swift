import AdminAuthHTTP
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
        let admin = AdminRouter(routes.router, authenticator: AdminTokenAuthenticator(store: store))
        AdminSessionRoutes(
            sessions: AdminSessions(
                store: store, hasher: hasher, attempts: environment.attempts, audit: environment.audit,
                settings: adminSettings), rateLimiter: environment.rateLimiter
        ).add(to: admin)
        AdminAccountRoutes(
            teams: AdminTeams(store: store, audit: environment.audit, settings: adminSettings), store: store,
            audit: environment.audit
        ).add(to: admin)
        let apps = AppStore(
            client: environment.postgres, catalog: catalog, outbox: environment.outbox, audit: environment.audit,
            logger: environment.logger)
        AppRoutes(administration: AppAdministration(apps: apps), apps: apps).add(to: admin)
        PushCredentialRoutes(
            apps: apps, internalClient: environment.internalClient,
            audit: environment.audit
        ).add(to: admin)
        let studies = StudyStore(client: environment.postgres, logger: environment.logger)
        let editing = DraftEditing(
            transactions: PostgresDraftWork.transactions(
                client: environment.postgres, studies: studies, audit: environment.audit, logger: environment.logger),
            studies: studies, apps: apps)
        StudyDraftRoutes(editing: editing, studies: studies).add(to: admin)
        ActivityImportRoutes(editing: editing).add(to: admin)
        let versions = StudyVersionStore(client: environment.postgres, logger: environment.logger)
        let lifecycle = StudyLifecycleActions(
            transactions: PostgresStudyLifecycleWork.transactions(
                client: environment.postgres, versions: versions, audit: environment.audit, outbox: environment.outbox,
                notifications: notifications, logger: environment.logger),
            catalog: catalog, storage: ResponseStorageRehearsals(internalClient: environment.internalClient), logger: environment.logger)
        StudyLifecycleRoutes(actions: lifecycle, versions: versions).add(to: admin)
        MoveInRoutes(moveIns: StudyMoveIns(drafts: editing, lifecycle: lifecycle, studies: studies, logger: environment.logger))
            .add(to: admin)
        let queued = StoredNotifications(store: notifications, audit: environment.audit)
        NotificationRoutes(
            announcements: Announcements(notifications: queued, apps: apps),
            messages: StudyMessages(studies: studies, notifications: queued), apps: apps, notifications: notifications,
            outbox: environment.outbox
        ).add(to: admin)
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
            imports: SchemaProtocolImports(editing: editing), published: published,
            protocolBase: publicBase, dataBase: schemaDataURL
        ).add(to: admin)
        StudyFileRoutes(
            files: StudyFileStore(
                client: environment.postgres, audit: environment.audit, logger: environment.logger, publicBase: publicBase)
        ).add(to: admin)
        StudyChecklistRoutes(
            checklists: StudyChecklists(
                studies: studies, store: StudyChecklistStore(client: environment.postgres, audit: environment.audit, logger: environment.logger))
        ).add(to: admin)
        SageAdminRoutes(imports: AssessmentImports(editing: editing, schemas: sageSchemas))
            .add(to: admin)
        let apiKeys = APIKeyStore(client: environment.postgres, audit: environment.audit, logger: environment.logger)
        AdminAPIKeyRoutes(keys: APIKeys(store: apiKeys), store: apiKeys).add(to: admin)
        InternalAdminRoutes(store: store, keys: apiKeys).add(to: routes.internalGroup)
    }
}
