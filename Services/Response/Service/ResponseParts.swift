import FHIR
import AdminAuthHTTP
import Foundation
import PostgresNIO
import ResponseCore
import SageAssessments
import ServiceKit

/// The response service's stores and use cases, made once per process: what its routes
/// (`ResponseService.mountRoutes`) and its workers (`ResponseService.workers`) share.
struct ResponseParts {
    let environment: ServiceEnvironment
    let response: ResponseSettings
    let access: QueryAccess
    /// The participants' and researchers' sandboxed queries' own pool, when configured.
    let queryClient: PostgresClient?
    let gridIndexes: GridSortIndexes
    let catalog: StudyCatalog
    let tokens: TokenStore
    let tables: StudyTables
    let properties: ParticipantPropertyStore
    let participants: EnrollmentStore
    let authenticator: RemoteAdminAuthenticator
    let forwardingAddresses: OutboundAddressPolicy
    let forwarding: ForwardingStore
    let designs: DesignSource
    /// Signalled when responses are stored: processing starts on them at once.
    let responsesStored: WakeSignal
    let responses: ResponseStore
    let sageArchives: SageArchiveStore
    let sageRefusals: SageRefusalStore
    let sageUploads: SageUploadStore
    let intake: SageArchiveIntake
    let maxArchiveBytes: Int
    let sagePublicURL: URL
    /// The FHIR API's public base, and the names of its resources under it.
    let fhirNaming: FHIRNaming
    let smartClients: SMARTClientStore
    let fhirResources: FHIRResources
    let fhirExports: FHIRExportStore

    init(
        environment: ServiceEnvironment, response: ResponseSettings, access: QueryAccess, queryClient: PostgresClient?,
        sageSchemas: SageSchemaSet
    ) throws {
        let settings = environment.settings
        let postgres = environment.postgres
        let logger = environment.logger
        self.environment = environment
        self.response = response
        self.access = access
        self.queryClient = queryClient
        gridIndexes = GridSortIndexes(client: postgres, logger: logger)
        catalog = StudyCatalog(client: postgres, audit: environment.audit, logger: logger)
        tokens = TokenStore(client: postgres, encryptionKey: response.encryptionKey, audit: environment.audit, logger: logger)
        tables = StudyTables(client: postgres, access: access, logger: logger)
        properties = ParticipantPropertyStore(
            client: postgres, tables: tables, tokens: tokens, audit: environment.audit, outbox: environment.outbox, logger: logger)
        participants = EnrollmentStore(
            client: postgres, tokens: tokens, properties: properties, audit: environment.audit, outbox: environment.outbox,
            logger: logger)
        authenticator = RemoteAdminAuthenticator(client: environment.internalClient)
        forwardingAddresses = OutboundAddressPolicy(allowPrivate: response.forwardingAllowPrivateTargets)
        forwarding = ForwardingStore(client: postgres, encryptionKey: response.encryptionKey, audit: environment.audit, logger: logger)
        designs = DesignSource(client: postgres, internalClient: environment.internalClient, tables: tables, logger: logger)
        responsesStored = WakeSignal()
        responses = ResponseStore(
            client: postgres, audit: environment.audit, stored: responsesStored, pooling: settings.database.pooling, logger: logger)
        guard let sagePublicURL = response.sagePublicURL ?? settings.peers[.response] else {
            throw ConfigurationError(ResponseSettings.Keys.sagePublicURL, "is needed: the service's own address is not known")
        }
        self.sagePublicURL = sagePublicURL
        guard let fhirBase = response.fhirPublicURL?.absoluteString ?? settings.peers[.response].map({ "\($0.absoluteString)/fhir/r4" }) else {
            throw ConfigurationError(ResponseSettings.Keys.fhirPublicURL, "is needed: the service's own address is not known")
        }
        fhirNaming = FHIRNaming(base: fhirBase.hasSuffix("/") ? String(fhirBase.dropLast()) : fhirBase)
        smartClients = SMARTClientStore(client: postgres, audit: environment.audit, pooling: settings.database.pooling, logger: logger)
        fhirResources = FHIRResources(
            store: FHIRStore(client: postgres, pooling: settings.database.pooling, logger: logger), designs: designs,
            consents: ConsentRecordSource(client: postgres, internalClient: environment.internalClient, logger: logger), naming: fhirNaming)
        fhirExports = FHIRExportStore(client: postgres, pooling: settings.database.pooling, logger: logger)
        sageArchives = SageArchiveStore(
            client: postgres, encryptionKey: response.encryptionKey, audit: environment.audit, stored: responsesStored,
            pooling: settings.database.pooling, logger: logger)
        sageRefusals = SageRefusalStore(client: postgres, logger: logger)
        maxArchiveBytes = min(response.sageMaxArchiveBytes, settings.maxBodySize)
        intake = SageArchiveIntake(
            responses: responses, archives: sageArchives, refusals: sageRefusals, schemas: sageSchemas,
            maxArchiveBytes: maxArchiveBytes)
        sageUploads = SageUploadStore(client: postgres, logger: logger)
    }
}
