import Foundation
import Logging
import NIOCore
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
        let reply: InternalClient.Reply
        do {
            reply = try await client.send(.GET, to: .response, path: InternalPaths.submissionFeed, query: "after=\(after)", logger: logger)
        } catch {
            logger.warning("the response service is unreachable for its feed of responses", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
        guard reply.status.code == 200 else {
            logger.warning("the response service refused its feed of responses", metadata: ["status": "\(reply.status.code)"])
            throw Unavailable()
        }
        return try JSONDecoder().decode(SubmissionFeed.self, from: Data(reply.body.readableBytesView))
    }

    /// The settlement feed's page after number `after`.
    package func settlements(after: Int64, logger: Logger) async throws -> SettlementFeed {
        let reply: InternalClient.Reply
        do {
            reply = try await client.send(.GET, to: .response, path: InternalPaths.settlementFeed, query: "after=\(after)", logger: logger)
        } catch {
            logger.warning("the response service is unreachable for its feed of settlements", metadata: ["error": "\(error)"])
            throw Unavailable()
        }
        guard reply.status.code == 200 else {
            logger.warning("the response service refused its feed of settlements", metadata: ["status": "\(reply.status.code)"])
            throw Unavailable()
        }
        return try JSONDecoder().decode(SettlementFeed.self, from: Data(reply.body.readableBytesView))
    }
}
