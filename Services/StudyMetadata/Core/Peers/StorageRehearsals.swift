import Foundation
import Logging
import NIOCore
import ServiceKit
import StudyModels

/// Whether the response service's tables can hold a response to each activity of a study: the
/// port the lifecycle's check before freezing a version asks through.
package protocol StorageRehearsals: Sendable {
    /// The problems found (none when every activity's response was stored); throws
    /// `StorageRehearsalUnavailable` when the answer cannot be had now.
    func problems(studyId: String, designs: [ActivityReply], logger: Logger) async throws -> [StorageProblem]
}

/// The response service could not be asked, or did not answer as it should.
package struct StorageRehearsalUnavailable: Error, CustomStringConvertible {
    package var description: String
}

/// The response service, asked over a signed internal call (`InternalPaths.storageRehearsals`).
package struct ResponseStorageRehearsals: StorageRehearsals {
    package let internalClient: InternalClient

    package init(internalClient: InternalClient) {
        self.internalClient = internalClient
    }

    /// How long a rehearsal may take: each new activity's tables are made (and rolled back) as
    /// its first response would make them, a few hundredths of a second each on a quiet
    /// machine; a study of a few hundred new activities, on a busy one, within this.
    static let longestWait: TimeAmount = .seconds(120)

    package func problems(studyId: String, designs: [ActivityReply], logger: Logger) async throws -> [StorageProblem] {
        guard !designs.isEmpty else { return [] }
        let path = InternalPaths.storageRehearsals(studyId: studyId)
        let reply: InternalClient.Reply
        do {
            // A service that is down is found within the usual wait, not the rehearsal's: the
            // HTTP client tries to connect until a request's deadline.
            _ = try await internalClient.send(.GET, to: .response, path: "/internal/v1/whoami", logger: logger)
            reply = try await internalClient.send(
                .POST, to: .response, path: path, body: Array(try JSONEncoder().encode(StorageRehearsalRequest(designs: designs))),
                waitingAtMost: Self.longestWait, logger: logger)
        } catch {
            logger.warning("the response service could not be asked to rehearse storage", metadata: ["error": "\(error)"])
            throw StorageRehearsalUnavailable(description: "the response service could not be reached")
        }
        guard reply.status.code == 200, let answer = try? JSONDecoder().decode(StorageRehearsalReply.self, from: Data(buffer: reply.body))
        else {
            logger.warning("the response service refused a storage rehearsal", metadata: ["status": "\(reply.status.code)"])
            throw StorageRehearsalUnavailable(description: "the response service answered \(reply.status.code)")
        }
        return answer.problems
    }
}
