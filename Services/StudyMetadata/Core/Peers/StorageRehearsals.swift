import Foundation
import InternalContracts
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

    package init(description: String) {
        self.description = description
    }
}

/// The response service, asked over a signed internal call (`InternalCalls.storageRehearsals`).
package struct ResponseStorageRehearsals: StorageRehearsals {
    package let internalClient: InternalClient

    package init(internalClient: InternalClient) {
        self.internalClient = internalClient
    }

    /// How long a rehearsal may take: each new activity's tables are made (and rolled back) as
    /// its first response would make them, a few hundredths of a second each on a quiet
    /// machine; a study of a few hundred new activities, on a busy one, within this.
    static let longestWait: TimeAmount = .seconds(120)

    /// The designs one call carries at most, as JSON: well within the response service's body
    /// limit (8 MiB by default), so a study of many or long activities is asked in several calls.
    /// Each design is rehearsed on the tables as they are whichever call carries it, so the calls
    /// find what one would. A design longer than this goes alone.
    static let batchBytes = 4 << 20

    package func problems(studyId: String, designs: [ActivityReply], logger: Logger) async throws -> [StorageProblem] {
        guard !designs.isEmpty else { return [] }
        do {
            // A service that is down is found within the usual wait, not the rehearsal's: the
            // HTTP client tries to connect until a request's deadline.
            _ = try await internalClient.call(InternalEndpoints.whoami(on: .response), logger: logger).reply(from: .response)
        } catch {
            logger.warning("the response service could not be asked to rehearse storage", metadata: ["error": "\(error)"])
            throw StorageRehearsalUnavailable(description: "the response service could not be reached")
        }
        var problems: [StorageProblem] = []
        for batch in try Self.batches(designs) {
            problems += try await rehearse(batch, studyId: studyId, logger: logger)
        }
        return problems
    }

    /// The designs as JSON, in calls of at most `batchBytes` each (`{"designs": [...]}`).
    static func batches(_ designs: [ActivityReply]) throws -> [[UInt8]] {
        let encoder = JSONEncoder()
        var batches: [[UInt8]] = []
        var current: [[UInt8]] = []
        var size = 0
        func close() {
            guard !current.isEmpty else { return }
            batches.append(Array(#"{"designs":["#.utf8) + Array(current.joined(separator: [UInt8(ascii: ",")])) + Array("]}".utf8))
            current = []
            size = 0
        }
        for design in designs {
            let encoded = Array(try encoder.encode(design))
            if size + encoded.count > batchBytes { close() }
            current.append(encoded)
            size += encoded.count + 1
        }
        close()
        return batches
    }

    private func rehearse(_ body: [UInt8], studyId: String, logger: Logger) async throws -> [StorageProblem] {
        do {
            return try await internalClient.call(
                InternalCalls.storageRehearsals, ["studyId": studyId], body: JSONBytes(body), waitingAtMost: Self.longestWait,
                logger: logger
            ).reply(from: .response).problems
        } catch {
            logger.warning(
                "the response service could not rehearse storage", metadata: ["error": "\(error)", "bytes": "\(body.count)"])
            throw StorageRehearsalUnavailable(description: "the response service could not be asked or did not answer")
        }
    }
}
