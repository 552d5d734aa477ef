import Foundation
import Logging
import ServiceKit
import ServiceLifecycle
import StudyModels

/// Reads every published study from study-metadata (`GET /internal/v1/studies`) once the service
/// has started and every ten minutes after, so a study event lost while this service was away is
/// caught up. Until the first read succeeds it tries again every few seconds.
package struct StudyResync: Service {
    package let catalog: StudyCatalog
    package let client: InternalClient
    package let isReady: @Sendable () -> Bool
    package let logger: Logger

    package init(
        catalog: StudyCatalog, client: InternalClient, isReady: @escaping @Sendable () -> Bool, logger: Logger
    ) {
        self.catalog = catalog
        self.client = client
        self.isReady = isReady
        self.logger = logger
    }

    package func run() async throws {
        try? await cancelWhenGracefulShutdown {
            var wait: Duration = .seconds(1)
            while !Task.isCancelled {
                if isReady() {
                    do {
                        let count = try await resync()
                        logger.info("studies read from study-metadata", metadata: ["studies": "\(count)"])
                        wait = .seconds(600)
                    } catch {
                        // A shutdown cancels the call in flight: nothing failed.
                        if Task.isCancelled { return }
                        logger.warning("study resync failed", metadata: ["error": "\(error)"])
                        wait = min(wait * 2, .seconds(60))
                    }
                }
                try await Task.sleep(for: wait)
            }
        }
    }

    /// Applies every study study-metadata lists; returns how many it listed.
    @discardableResult
    package func resync() async throws -> Int {
        let response = try await client.send(.GET, to: .studyMetadata, path: InternalPaths.studies, logger: logger)
        guard response.status.code == 200 else {
            throw InternalCallError(peer: .studyMetadata, reason: "GET \(InternalPaths.studies) answered \(response.status.code)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let list = try decoder.decode(StudyEventList.self, from: Data(buffer: response.body))
        for event in list.studies { _ = try await catalog.apply(event) }
        return list.studies.count
    }
}
