import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `PUT /internal/v1/studies/{studyId}/run-weeks`: registration's outbox sends a participant's
/// weeks as it counted them (signed; only registration may call it), kept in the study's
/// `RunAdherence` table. Repeated or late deliveries change nothing more.
package struct InternalRunWeekRoutes {
    package struct Received: ResponseEncodable {
        package var changed: Int
    }

    package let adherence: RunAdherenceStore

    package init(adherence: RunAdherenceStore) {
        self.adherence = adherence
    }

    /// The largest body: `RunAdherenceUpdate.maxWeeks` weeks of long activity ids fit well inside.
    static let maxBody = 1024 * 1024

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.put("/v1/studies/:studyId/run-weeks", use: receive)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Received {
        try context.requireCaller(.registration, "sends participants' counted weeks")
        let studyId = try context.parameters.require("studyId")
        let buffer = try await request.body.collect(upTo: Self.maxBody)
        guard let update = try? JSONDecoder().decode(RunAdherenceUpdate.self, from: Data(buffer: buffer)), update.isWellFormed else {
            throw APIError.badRequest(
                "the body is not a participant's run weeks: a 64-digit lowercase hex hash, at most \(RunAdherenceUpdate.maxWeeks) "
                    + "weeks, each an activity id of 1 to 100 characters, a yyyy-MM-dd Monday and counts from 0 to 1000000")
        }
        return Received(changed: try await adherence.record(update, studyId: studyId))
    }
}
