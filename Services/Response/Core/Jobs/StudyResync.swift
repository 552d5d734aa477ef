import Foundation
import InternalContracts
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
        let list = try await client.call(InternalCalls.studies, logger: logger).reply(from: .studyMetadata)
        for event in list.studies { _ = try await catalog.apply(event) }
        return list.studies.count
    }
}
