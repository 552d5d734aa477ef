import ServiceKit
import StudyModels

// MARK: response: a study's data, its processing, forwarding, Sage archives, tokens, exports

extension AdminCalls {
    public static let responseTables = AdminEndpoint<NoContent, ResponseTableList>(
        .GET, "/admin/v1/studies/{studyId}/tables", on: .response, access: .study(.viewer))
    /// `?sort=&order=&participant=&from=&to=&parent=&limit=&after=`.
    public static let tableRows = AdminEndpoint<NoContent, TableRowsPage>(
        .GET, "/admin/v1/studies/{studyId}/tables/{table}/rows", on: .response, access: .study(.viewer))
    /// `?status=&participant=&activity=&appTokenSHA256=&after=&limit=`.
    public static let responses = AdminEndpoint<NoContent, ResponseSummaryList>(
        .GET, "/admin/v1/studies/{studyId}/responses", on: .response, access: .study(.viewer))
    /// `?days=`.
    public static let dailyResponses = AdminEndpoint<NoContent, DailyResponses>(
        .GET, "/admin/v1/studies/{studyId}/responses/daily", on: .response, access: .study(.viewer))
    public static let reprocess = AdminEndpoint<ReprocessRequest, ReprocessOutcome>(
        .POST, "/admin/v1/studies/{studyId}/responses/reprocess", on: .response, access: .study(.studyAdmin))
    /// `?appTokenSHA256=h1,h2` or `?participant=n`.
    public static let participantNumbers = AdminEndpoint<NoContent, ParticipantNumbers>(
        .GET, "/admin/v1/studies/{studyId}/participant-numbers", on: .response, access: .study(.viewer))
    /// `?participant=n` or `?appTokenSHA256=h`, and `limit=` (responses), `archives=`.
    public static let participantData = AdminEndpoint<NoContent, ParticipantDataReply>(
        .GET, "/admin/v1/studies/{studyId}/participant-data", on: .response, access: .study(.viewer))
    public static let forwarding = AdminEndpoint<NoContent, ForwardingView>(
        .GET, "/admin/v1/studies/{studyId}/forwarding", on: .response, access: .study(.viewer))
    /// `type` and the fields of that type.
    public static let setForwarding = AdminEndpoint<ForwardingSettings, ForwardingView>(
        .PUT, "/admin/v1/studies/{studyId}/forwarding", on: .response, access: .study(.studyAdmin))
    /// A CSV of participant-property values per enrollment token, all or nothing.
    public static let participantProperties = AdminEndpoint<CSVText, JSONBytes>(
        .PUT, "/admin/v1/studies/{studyId}/participant-properties", on: .response, access: .study(.editor))
    /// Streamed: every table as CSV in a ZIP.
    public static let exportZip = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/export.zip", on: .response, access: .study(.editor))
    /// Streamed: every row as a JSON line.
    public static let exportJSONLines = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/export.jsonl", on: .response, access: .study(.editor))
    /// `?limit=&after=`.
    public static let schemaParticipants = AdminEndpoint<NoContent, SchemaParticipantList>(
        .GET, "/admin/v1/studies/{studyId}/schema-participants", on: .response, access: .study(.viewer))

    public static let sageCertificate = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/sage/certificate", on: .response, access: .study(.viewer))
    /// `?participant=&limit=`.
    public static let sageArchives = AdminEndpoint<NoContent, SageArchiveList>(
        .GET, "/admin/v1/studies/{studyId}/sage/archives", on: .response, access: .study(.viewer))
    public static let sageArchive = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/sage/archives/{archiveId}", on: .response, access: .study(.editor))
    /// `?name=`.
    public static let sageArchiveFile = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/sage/archives/{archiveId}/file", on: .response, access: .study(.editor))
    /// `?limit=`.
    public static let refusedSageArchives = AdminEndpoint<NoContent, SageRefusedArchiveList>(
        .GET, "/admin/v1/studies/{studyId}/sage/refused", on: .response, access: .study(.viewer))
    public static let refusedSageArchive = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/sage/refused/{refusalId}", on: .response, access: .study(.editor))
    public static let reprocessRefusedSageArchive = AdminEndpoint<NoContent, SageReprocessed>(
        .POST, "/admin/v1/studies/{studyId}/sage/refused/{refusalId}/reprocess", on: .response, access: .study(.editor))

    public static let tokenBatches = AdminEndpoint<NoContent, TokenBatchList>(
        .GET, "/admin/v1/studies/{studyId}/token-batches", on: .response, access: .study(.viewer))
    public static let createTokenBatch = AdminEndpoint<TokenBatchRequest, TokenBatchCreated>(
        .POST, "/admin/v1/studies/{studyId}/token-batches", on: .response, access: .study(.editor))
    public static let tokenBatchCSV = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/token-batches/{batchId}/tokens.csv", on: .response, access: .study(.editor))
    public static let tokenBatchSheet = AdminEndpoint<NoContent, OpaqueBody>(
        .GET, "/admin/v1/studies/{studyId}/token-batches/{batchId}/qr.pdf", on: .response, access: .study(.editor))
    public static let setCollection = AdminEndpoint<JSONBytes, JSONBytes>(
        .PUT, "/admin/v1/studies/{studyId}/collection", on: .response, access: .study(.editor))

    /// SMART Backend Services clients of the study's FHIR API (docs/fhir.md, Authorisation).
    public static let smartClients = AdminEndpoint<NoContent, SMARTClientList>(
        .GET, "/admin/v1/studies/{studyId}/fhir-clients", on: .response, access: .study(.viewer))
    public static let registerSMARTClient = AdminEndpoint<SMARTClientRegistration, SMARTClientView>(
        .POST, "/admin/v1/studies/{studyId}/fhir-clients", on: .response, access: .study(.studyAdmin))
    public static let revokeSMARTClient = AdminEndpoint<NoContent, NoContent>(
        .DELETE, "/admin/v1/studies/{studyId}/fhir-clients/{clientId}", on: .response, access: .study(.studyAdmin))
    /// `?dryRun=`: one part of a MyStudies 2.x deployment's stored responses (`MovedResponsesPart`)
    /// becomes the study's responses (docs/moving-in.md); a dry run, the default, only reports.
    public static let moveInResponses = AdminEndpoint<JSONBytes, ResponseMoveInReport>(
        .POST, "/admin/v1/studies/{studyId}/move-in/responses", on: .response, access: .superAdmin)
}

extension AdminCalls {
    /// Every admin endpoint response answers.
    public static let response: [any AdminEndpointDescription] = [
        responseTables,
        tableRows,
        responses,
        dailyResponses,
        reprocess,
        participantNumbers,
        participantData,
        forwarding,
        setForwarding,
        participantProperties,
        exportZip,
        exportJSONLines,
        schemaParticipants,
        sageCertificate,
        sageArchives,
        sageArchive,
        sageArchiveFile,
        refusedSageArchives,
        refusedSageArchive,
        reprocessRefusedSageArchive,
        tokenBatches,
        createTokenBatch,
        tokenBatchCSV,
        tokenBatchSheet,
        setCollection,
        smartClients,
        registerSMARTClient,
        revokeSMARTClient,
        moveInResponses,
    ]
}
