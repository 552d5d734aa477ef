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
                let catalog = CatalogCache(timeToLive: adminSettings.catalogCacheDuration)
                let notifications = NotificationStore(client: environment.postgres, logger: environment.logger)
                try mountRoutes(
                    on: routes, environment: environment, adminSettings: adminSettings, hasher: hasher, sageSchemas: sageSchemas,
                    catalog: catalog, notifications: notifications)
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
