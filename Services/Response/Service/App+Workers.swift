import FHIR
import ResponseCore
import ServiceKit
import ServiceLifecycle

extension ResponseService {
    /// The response service's background work: the studies' resync, processing (where enabled),
    /// forwarding, the completion of Sage uploads, the grid's sort indexes, and the query pool.
    static func workers(_ parts: ResponseParts) -> [any Service] {
        let environment = parts.environment
        let logger = environment.logger
        let resync = StudyResync(
            catalog: parts.catalog, client: environment.internalClient, isReady: { environment.startup.isFinished },
            logger: logger)
        let processor = ResponseProcessor(
            client: environment.postgres, designs: parts.designs, tables: parts.tables, writer: ResponseWriter(logger: logger),
            metrics: environment.metrics, storesInFlight: parts.response.processingStores, logger: logger)
        let processing = environment.queueWorker(
            "responses", wake: parts.responsesStored,
            // At most 20 batches of 100 (about a second) and a design fetch (10 s at most) per new design.
            timing: .init(pollInterval: .milliseconds(500), roundDeadline: .seconds(30))
        ) { try await processor.round() }
        let oauthTokens = OAuthTokenCache()
        let forwardingWorker = HTTPClientWorker(client: ResponseForwarder.makeHTTPClient) { httpClient in
            let forwarder = ResponseForwarder(
                store: parts.forwarding, tokens: parts.tokens, addresses: parts.forwardingAddresses, oauth: oauthTokens,
                fhir: FHIRForwarding(catalog: parts.catalog, resources: parts.fhirResources, forwarding: parts.forwarding),
                httpClient: httpClient, metrics: environment.metrics, logger: logger)
            // Forwarding polls: a target is not waiting on the second.
            return environment.queueWorker(
                "forwarding", timing: .init(pollInterval: .milliseconds(500), roundDeadline: .seconds(120))
            ) {
                try await forwarder.round()
            }
        }
        // Uploads whose clients did not complete them: polled, as none is waited for.
        let uploadCompletion = SageUploadCompletion(intake: parts.intake, uploads: parts.sageUploads, logger: logger)
        let completingUploads = environment.queueWorker(
            "sage-uploads", timing: .init(pollInterval: .seconds(30), roundDeadline: .seconds(120))
        ) { try await uploadCompletion.round() }
        // Bulk Data exports: a round is one export, as long as it takes (its lease is renewed with
        // every chunk it writes); polled, as a client polls its status too.
        let exporter = FHIRExporter(
            exports: parts.fhirExports, catalog: parts.catalog, resources: parts.fhirResources,
            deidentification: FHIRDeidentification(secret: parts.response.encryptionKey), audit: environment.audit,
            metrics: environment.metrics, logger: logger)
        let exporting = environment.queueWorker(
            "fhir-exports", timing: .init(pollInterval: .seconds(1), roundDeadline: .seconds(6 * 3600))
        ) { try await exporter.round() }
        environment.metrics.watchQueue("responses", query: ProcessingStore.depthQuery)
        let workers: [any Service] =
            (parts.response.processingEnabled ? [processing, forwardingWorker] : [forwardingWorker]) + [completingUploads, exporting]
        return [resync, parts.gridIndexes] + workers + (parts.queryClient.map { [$0] } ?? [])
    }
}
