import AdminAuthHTTP
import Foundation
import ResponseCore
import ResponseHTTP
import ServiceKit
import ServiceKitHTTP

extension ResponseService {
    /// Every route of the response service: the internal calls, the admin API, the researchers'
    /// LabKey API, and the apps' doors (MyStudies, the schema app, Sage).
    static func mountRoutes(_ parts: ResponseParts, on routes: ServiceRoutes) {
        let environment = parts.environment
        let postgres = environment.postgres
        let logger = environment.logger
        let catalog = parts.catalog
        let admin = ResponseAdminRouter(AdminRouter(routes.router, authenticator: parts.authenticator), catalog: catalog)

        InternalStudyEventRoutes(catalog: catalog, properties: parts.properties).add(to: routes.internalGroup)
        InternalRunWeekRoutes(adherence: RunAdherenceStore(client: postgres, tables: parts.tables, logger: logger))
            .add(to: routes.internalGroup)
        InternalInvitationTokenRoutes(catalog: catalog, tokens: parts.tokens, properties: parts.properties)
            .add(to: routes.internalGroup)
        InternalMovedParticipantRoutes(catalog: catalog, participants: parts.participants, tokens: parts.tokens).add(to: routes.internalGroup)
        InternalSubmissionRoutes(submissions: SubmissionStore(client: postgres, logger: logger)).add(to: routes.internalGroup)
        InternalStorageRehearsalRoutes(
            rehearsal: StorageRehearsal(client: postgres, tables: parts.tables, writer: ResponseWriter(logger: logger), logger: logger)
        ).add(to: routes.internalGroup)

        AdminTokenRoutes(
            catalog: catalog, tokens: parts.tokens, audit: environment.audit,
            maxBatch: parts.response.maxTokenBatch
        ).add(to: admin)
        let responseAdmin = ResponseAdminStore(client: postgres, audit: environment.audit, logger: logger)
        AdminResponseRoutes(
            responses: responseAdmin,
            reprocessing: ResponseReprocessing(responses: responseAdmin, designs: parts.designs),
            forwarding: parts.forwarding, addresses: parts.forwardingAddresses
        ).add(to: admin)
        AdminPropertyRoutes(properties: parts.properties).add(to: admin)
        AdminMoveInResponseRoutes(
            catalog: catalog,
            moveIns: ResponseMoveIns(
                store: MovedResponseStore(client: postgres, audit: environment.audit, stored: parts.responsesStored, logger: logger))
        ).add(to: admin.routes)
        let researcherQueries = parts.queryClient.map {
            SandboxedQueries(
                reader: $0, access: parts.access, limits: parts.response.researcherQueryLimits,
                dateFormat: SandboxedQueries.researcherDateFormat, timeZone: .gmt, logger: logger)
        }
        LabKeyResearcherRoutes(
            catalog: catalog, authenticator: RemoteAPIKeyAuthenticator(client: environment.internalClient),
            queries: LabKeyResearcherQueries(queries: ResearcherQueries(lists: parts.tables, sandbox: researcherQueries))
        ).add(to: routes.router)
        AdminTableRoutes(
            tables: parts.tables,
            grid: TableGridStore(client: postgres, indexes: parts.gridIndexes, logger: logger), responses: responseAdmin
        ).add(to: admin)
        AdminExportRoutes(
            tables: parts.tables, export: StudyExport(client: postgres, logger: logger), audit: environment.audit
        ).add(to: admin)
        AdminParticipantDataRoutes(responses: responseAdmin, archives: parts.sageArchives).add(to: admin)
        AdminSageRoutes(
            archives: parts.sageArchives, refusals: parts.sageRefusals,
            intake: parts.intake, audit: environment.audit
        ).add(to: admin)
        AdminSchemaRoutes(
            catalog: catalog, participants: SchemaParticipantStore(client: postgres, logger: logger)
        ).add(to: admin)
        let tokenURL = "\(parts.fhirNaming.base)/auth/token"
        AdminSMARTClientRoutes(clients: parts.smartClients, tokenURL: tokenURL).add(to: admin)
        FHIRAuthRoutes(
            issuing: SMARTTokenIssuing(clients: parts.smartClients, tokenURL: tokenURL), rateLimiter: environment.rateLimiter,
            addresses: environment.settings.clientAddresses
        ).add(to: routes.router)
        let fhirReading = FHIRReading(clients: parts.smartClients, catalog: catalog, resources: parts.fhirResources, audit: environment.audit)
        // The exports' fixed paths first: `Patient/$export` is not a Patient's id.
        FHIRExportRoutes(exporting: FHIRExporting(reading: fhirReading, exports: parts.fhirExports)).add(to: routes.router)
        FHIRReadRoutes(reading: fhirReading, tokenURL: tokenURL).add(to: routes.router)

        let response = parts.response
        let queries = parts.queryClient.map {
            SandboxedQueries(
                reader: $0, access: parts.access,
                limits: .init(
                    timeout: response.queryTimeout, maxRows: response.queryMaxRows, maxReplyBytes: response.queryMaxReplyBytes,
                    maxConcurrent: response.queryMaxConcurrent),
                timeZone: response.queryTimeZone, logger: logger)
        }
        MobileAppRoutes(
            enrollment: EnrollmentRoutes(
                enrollment: Enrollment(catalog: catalog, participants: parts.participants),
                throttle: TokenGuessThrottle(rateLimiter: environment.rateLimiter, metrics: environment.metrics)),
            responses: ResponseRoutes(responses: parts.responses, submission: ResponseSubmission(responses: parts.responses)),
            queries: QueryRoutes(responses: parts.responses, tables: parts.tables, queries: queries)
        ).add(to: routes.router)
        let schemaPosts = SchemaPostStore(client: postgres, ingest: parts.responses.ingest, audit: environment.audit, logger: logger)
        SchemaDataRoutes(
            posts: SchemaPosts(studies: schemaPosts, arrivals: schemaPosts),
            limiter: LocalRateLimiter(perMinute: response.schemaPostsPerMinute),
            addresses: environment.settings.clientAddresses
        ).add(to: routes.router)
        SageArchiveRoutes(
            intake: parts.intake,
            handshake: SageUploadHandshake(intake: parts.intake, uploads: parts.sageUploads, maxArchiveBytes: parts.maxArchiveBytes),
            publicURL: parts.sagePublicURL
        ).add(to: routes.router)
    }
}
