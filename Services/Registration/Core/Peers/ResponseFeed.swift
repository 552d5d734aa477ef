import Foundation
import InternalContracts
import Logging
import ServiceKit
import StudyModels

/// Reads the response service's feed of stored responses (a signed internal call): what the runs
/// of registration's participants are completed by.
package struct ResponseFeed: Sendable {
    package let client: InternalClient

    package init(client: InternalClient) {
        self.client = client
    }

    package struct Unavailable: Error {}

    /// The page after response `after`.
    package func page(after: Int64, logger: Logger) async throws -> SubmissionFeed {
        try await read(InternalCalls.submissionFeed, after: after, what: "its feed of responses", logger: logger)
    }

    /// The settlement feed's page after number `after`.
    package func settlements(after: Int64, logger: Logger) async throws -> SettlementFeed {
        try await read(InternalCalls.settlementFeed, after: after, what: "its feed of settlements", logger: logger)
    }

    private func read<Reply>(_ endpoint: InternalEndpoint<NoContent, Reply>, after: Int64, what: String, logger: Logger) async throws -> Reply {
        do {
            return try await client.call(endpoint, query: "after=\(after)", logger: logger).reply(from: .response)
        } catch {
            logger.warning("the response service could not answer for \(what)", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
    }
}
