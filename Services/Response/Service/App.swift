import AdminAuthHTTP
import AsyncHTTPClient
import Configuration
import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ResponseHTTP
import SageAssessments
import ServiceKit
import ServiceKitHTTP
import ServiceLifecycle
import StudyModels

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
                let postgres = environment.postgres
                let gridIndexes = GridSortIndexes(client: postgres, logger: environment.logger)
                let catalog = StudyCatalog(client: postgres, audit: environment.audit, logger: environment.logger)
                let tokens = TokenStore(
                    client: postgres, encryptionKey: response.encryptionKey, audit: environment.audit,
                    logger: environment.logger)
                let tables = StudyTables(client: postgres, access: access, logger: environment.logger)
                let properties = ParticipantPropertyStore(
                    client: postgres, tables: tables, tokens: tokens, audit: environment.audit, outbox: environment.outbox,
                    logger: environment.logger)
                let participants = EnrollmentStore(
                    client: postgres, tokens: tokens, properties: properties, audit: environment.audit,
                    outbox: environment.outbox, logger: environment.logger)
                let authenticator = RemoteAdminAuthenticator(client: environment.internalClient)
                let forwardingAddresses = OutboundAddressPolicy(allowPrivate: response.forwardingAllowPrivateTargets)
                let forwarding = ForwardingStore(
                    client: postgres, encryptionKey: response.encryptionKey, audit: environment.audit,
                    logger: environment.logger)
                InternalStudyEventRoutes(catalog: catalog, properties: properties).add(to: routes.internalGroup)
                InternalRunWeekRoutes(adherence: RunAdherenceStore(client: postgres, tables: tables, logger: environment.logger))
                    .add(to: routes.internalGroup)
                InternalInvitationTokenRoutes(catalog: catalog, tokens: tokens, properties: properties).add(to: routes.internalGroup)
                InternalSubmissionRoutes(submissions: SubmissionStore(client: postgres, logger: environment.logger))
                    .add(to: routes.internalGroup)
                InternalStorageRehearsalRoutes(
                    rehearsal: StorageRehearsal(
                        client: postgres, tables: tables, writer: ResponseWriter(logger: environment.logger), logger: environment.logger)
                ).add(to: routes.internalGroup)
                AdminTokenRoutes(
                    catalog: catalog, tokens: tokens, authenticator: authenticator,
                    audit: environment.audit, maxBatch: response.maxTokenBatch
                ).add(to: routes.router)
                let designs = DesignSource(
                    client: postgres, internalClient: environment.internalClient, tables: tables, logger: environment.logger)
                let responseAdmin = ResponseAdminStore(client: postgres, audit: environment.audit, logger: environment.logger)
                AdminResponseRoutes(
                    catalog: catalog, authenticator: authenticator, responses: responseAdmin,
                    reprocessing: ResponseReprocessing(responses: responseAdmin, designs: designs),
                    forwarding: forwarding, addresses: forwardingAddresses
                ).add(to: routes.router)
                AdminPropertyRoutes(catalog: catalog, authenticator: authenticator, properties: properties)
                    .add(to: routes.router)
                let researcherQueries = queryClient.map {
                    SandboxedQueries(
                        reader: $0, access: access, limits: response.researcherQueryLimits,
                        dateFormat: SandboxedQueries.researcherDateFormat, timeZone: TimeZone(identifier: "UTC")!,
                        logger: environment.logger)
                }
                LabKeyResearcherRoutes(
                    catalog: catalog, authenticator: RemoteAPIKeyAuthenticator(client: environment.internalClient),
                    queries: LabKeyResearcherQueries(tables: tables, queries: researcherQueries)
                ).add(to: routes.router)
                AdminTableRoutes(
                    catalog: catalog, authenticator: authenticator, tables: tables,
                    grid: TableGridStore(client: postgres, indexes: gridIndexes, logger: environment.logger)
                ).add(to: routes.router)
                AdminExportRoutes(
                    catalog: catalog, authenticator: authenticator, tables: tables,
                    export: StudyExport(client: postgres, logger: environment.logger), audit: environment.audit
                ).add(to: routes.router)
                let responsesStored = WakeSignal()
                let responses = ResponseStore(
                    client: postgres, audit: environment.audit, stored: responsesStored, pooling: settings.database.pooling,
                    logger: environment.logger)
                let queries = queryClient.map {
                    SandboxedQueries(
                        reader: $0, access: access,
                        limits: .init(
                            timeout: response.queryTimeout, maxRows: response.queryMaxRows,
                            maxReplyBytes: response.queryMaxReplyBytes, maxConcurrent: response.queryMaxConcurrent),
                        timeZone: response.queryTimeZone, logger: environment.logger)
                }
                MobileAppRoutes(
                    enrollment: EnrollmentRoutes(
                        enrollment: Enrollment(catalog: catalog, participants: participants), participants: participants,
                        properties: properties, catalog: catalog,
                        throttle: TokenGuessThrottle(rateLimiter: environment.rateLimiter, metrics: environment.metrics)),
                    responses: ResponseRoutes(responses: responses, submission: ResponseSubmission(responses: responses)),
                    queries: QueryRoutes(responses: responses, tables: tables, queries: queries)
                ).add(to: routes.router)
                SchemaDataRoutes(
                    receiver: SchemaReceiver(
                        client: postgres, ingest: responses.ingest, audit: environment.audit, logger: environment.logger),
                    limiter: LocalRateLimiter(perMinute: response.schemaPostsPerMinute),
                    addresses: environment.settings.clientAddresses
                ).add(to: routes.router)
                guard let sagePublicURL = response.sagePublicURL ?? settings.peers[.response] else {
                    throw ConfigurationError(ResponseSettings.Keys.sagePublicURL, "is needed: the service's own address is not known")
                }
                let sageArchives = SageArchiveStore(
                    client: postgres, encryptionKey: response.encryptionKey, audit: environment.audit, stored: responsesStored,
                    pooling: settings.database.pooling, logger: environment.logger)
                let sageRefusals = SageRefusalStore(client: postgres, logger: environment.logger)
                let maxArchiveBytes = min(response.sageMaxArchiveBytes, settings.maxBodySize)
                let intake = SageArchiveIntake(
                    responses: responses, archives: sageArchives, refusals: sageRefusals, schemas: sageSchemas,
                    maxArchiveBytes: maxArchiveBytes)
                let sageUploads = SageUploadStore(client: postgres, logger: environment.logger)
                SageArchiveRoutes(
                    intake: intake,
                    handshake: SageUploadHandshake(intake: intake, uploads: sageUploads, maxArchiveBytes: maxArchiveBytes),
                    publicURL: sagePublicURL
                ).add(to: routes.router)
                AdminSageRoutes(
                    catalog: catalog, authenticator: authenticator, archives: sageArchives, refusals: sageRefusals, intake: intake,
                    audit: environment.audit
                ).add(to: routes.router)
                AdminSchemaRoutes(
                    catalog: catalog, participants: SchemaParticipantStore(client: postgres, logger: environment.logger),
                    authenticator: authenticator
                ).add(to: routes.router)
                let resync = StudyResync(
                    catalog: catalog, client: environment.internalClient, isReady: { environment.startup.isFinished },
                    logger: environment.logger)
                let processor = ResponseProcessor(
                    client: postgres,
                    designs: designs,
                    tables: tables, writer: ResponseWriter(logger: environment.logger), metrics: environment.metrics,
                    storesInFlight: response.processingStores, logger: environment.logger)
                let processing = environment.queueWorker(
                    "responses", wake: responsesStored,
                    // At most 20 batches of 100 (about a second) and a design fetch (10 s at most) per new design.
                    timing: .init(pollInterval: .milliseconds(500), roundDeadline: .seconds(30))
                ) { try await processor.round() }
                let oauthTokens = OAuthTokenCache()
                let forwardingWorker = HTTPClientWorker(client: ResponseForwarder.makeHTTPClient) { httpClient in
                    let forwarder = ResponseForwarder(
                        store: forwarding, tokens: tokens, addresses: forwardingAddresses, oauth: oauthTokens,
                        httpClient: httpClient, metrics: environment.metrics, logger: environment.logger)
                    // Forwarding polls: a target is not waiting on the second.
                    return environment.queueWorker(
                        "forwarding", timing: .init(pollInterval: .milliseconds(500), roundDeadline: .seconds(120))
                    ) {
                        try await forwarder.round()
                    }
                }
                // Uploads whose clients did not complete them: polled, as none is waited for.
                let uploadCompletion = SageUploadCompletion(intake: intake, uploads: sageUploads, logger: environment.logger)
                let completingUploads = environment.queueWorker(
                    "sage-uploads", timing: .init(pollInterval: .seconds(30), roundDeadline: .seconds(120))
                ) { try await uploadCompletion.round() }
                environment.metrics.watchQueue("responses", query: ProcessingStore.depthQuery)
                let workers: [any Service] =
                    (response.processingEnabled ? [processing, forwardingWorker] : [forwardingWorker]) + [completingUploads]
                return [resync, gridIndexes] + workers + (queryClient.map { [$0] } ?? [])
            },
            afterMigrations: { environment in
                try await StudyTables(client: environment.postgres, access: access, logger: environment.logger)
                    .addMissingOffsetColumns()
                try await access.prepare(client: environment.postgres, logger: environment.logger)
            },
            routeCatalog: routeCatalog)
    }
}
