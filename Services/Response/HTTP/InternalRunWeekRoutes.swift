import Foundation
import Hummingbird
import InternalContracts
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `PUT /internal/v1/studies/{studyId}/run-weeks`: registration's outbox sends a participant's
/// weeks as it counted them (signed; only registration may call it), kept in the study's
/// `RunAdherence` table. Repeated or late deliveries change nothing more.
package struct InternalRunWeekRoutes {
    package let adherence: RunAdherenceStore

    package init(adherence: RunAdherenceStore) {
        self.adherence = adherence
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.runWeeks, use: receive)
    }

    @Sendable package func receive(_ call: InternalRequest<RunAdherenceUpdate>) async throws -> RunWeeksChanged {
        RunWeeksChanged(changed: try await adherence.record(call.body, studyId: try call.parameter("studyId")))
    }
}
