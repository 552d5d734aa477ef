import Configuration
import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ResponseHTTP
import SageAssessments
import ServiceKit
import ServiceKitHTTP

/// Assembly point of the response service.
public enum ResponseService: ServiceAssembly {
    public static let descriptor = ServiceDescriptor(
        name: .response,
        defaultPort: 8083,
        defaultDatabase: "studystack_response",
        migrations: ResponseMigrations.all
    )

    /// Builds the application from parsed settings (what `main` does).
    public static func buildApplication(
        reader: ConfigReader, settings: ServiceSettings, logger: Logger, routeCatalog: RouteCatalog?
    ) throws -> ServiceApplication {
        let response = try ResponseSettings(reader: reader)
        if let query = response.queryDatabase, query.username == settings.database.username {
            // The service's own role owns the tables and is not held by their row-level security.
            throw ConfigurationError(
                ResponseSettings.Keys.queryDatabaseURL, "must name a role of its own, not the service's database user")
        }
        // Sage's schemas are read and mended once; a failure here is a broken build, not input.
        let sageSchemas = try SageSchemaSet.bundled()
        let access = QueryAccess(readerRole: response.queryDatabase?.username, encryptionKey: response.encryptionKey)
        let queryClient = response.queryDatabase.map {
            PostgresClient(
                configuration: $0.clientConfiguration(applicationName: "response-participant-queries"), backgroundLogger: logger)
        }
        return try buildServiceApplication(
            descriptor: descriptor, settings: settings, logger: logger,
            errorFormat: { path in LabKeyCall.isLabKeyPath(path) ? .labKey : .admin },
            addRoutes: { routes, environment in
                let parts = try ResponseParts(
                    environment: environment, response: response, access: access, queryClient: queryClient,
                    sageSchemas: sageSchemas)
                mountRoutes(parts, on: routes)
                return workers(parts)
            },
            afterMigrations: { environment in
                try await StudyTables(client: environment.postgres, access: access, logger: environment.logger)
                    .addMissingOffsetColumns()
                try await access.prepare(client: environment.postgres, logger: environment.logger)
            },
            routeCatalog: routeCatalog)
    }
}
