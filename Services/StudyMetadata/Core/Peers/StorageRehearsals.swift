import Foundation
import Logging
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

    package func problems(studyId: String, designs: [ActivityReply], logger: Logger) async throws -> [StorageProblem] {
        let path = InternalPaths.storageRehearsals(studyId: studyId)
        let reply: InternalClient.Reply
        do {
            reply = try await internalClient.send(
                .POST, to: .response, path: path, body: Array(try JSONEncoder().encode(StorageRehearsalRequest(designs: designs))),
                logger: logger)
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
