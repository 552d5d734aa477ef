import Configuration
import Logging
import SageAssessments
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyModels

/// Assembly point of the study-metadata service.
public enum StudyMetadataService: ServiceAssembly {
    public static let descriptor = ServiceDescriptor(
        name: .studyMetadata,
        defaultPort: 8081,
        defaultDatabase: "studystack_metadata",
        migrations: StudyMetadataMigrations.all
    )

    /// Builds the application from parsed settings (what `main` does).
    public static func buildApplication(
        reader: ConfigReader, settings: ServiceSettings, logger: Logger, routeCatalog: RouteCatalog?
    ) throws -> ServiceApplication {
        let adminSettings = try AdminSettings(reader: reader)
        let hasher = PasswordHasher()
        // Sage's schemas ship beside the executable; without them the service does not start.
        let sageSchemas = try SageSchemaSet.bundled()
        return try buildServiceApplication(
            descriptor: descriptor, settings: settings, logger: logger,
            errorFormat: { path in path.hasPrefix("/StudyMetaData/") ? .statusMessage : .admin },
            addRoutes: { routes, environment in
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
                let catalog = CatalogCache(timeToLive: adminSettings.catalogCacheDuration)
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
                let notifications = NotificationStore(client: environment.postgres, logger: environment.logger)
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
                let schemaDataURL = adminSettings.schemaDataURL ?? environment.settings.peers[.response]!
                SchemaProtocolRoutes(published: published, dataURL: schemaDataURL).add(to: routes.router)
                // Where phones reach this service: the schema protocols' and the uploaded files' URLs start with it.
                let publicBase = adminSettings.schemaProtocolURL ?? environment.settings.peers[.studyMetadata]!
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
                catalog.listen(through: environment.changes)
                // Due notifications go to the registration service within seconds of their time:
                // the notification is due by the clock, so this queue polls (every 5 s).
                let dispatcher = environment.queueWorker("notifications", timing: .init(pollInterval: .seconds(5))) {
                    try await notifications.dispatchDue(outbox: environment.outbox, audit: environment.audit)
                }
                return [dispatcher]
            },
            afterMigrations: { environment in
                try await AdminBootstrap(
                    store: AdminStore(client: environment.postgres, logger: environment.logger), hasher: hasher,
                    audit: environment.audit, settings: adminSettings, logger: environment.logger
                ).run()
            },
            routeCatalog: routeCatalog)
    }
}
