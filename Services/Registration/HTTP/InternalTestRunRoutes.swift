import Foundation
import Hummingbird
import InternalContracts
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `POST /internal/v1/studies/{studyId}/testing-ended`: study-metadata's outbox reports that a
/// study's test run ended (signed; only study-metadata may call it). A repeated delivery removes
/// nothing more: only rows from before the run ended go.
package struct InternalTestRunRoutes {
    package let cleanup: TestRunCleanup

    package init(cleanup: TestRunCleanup) {
        self.cleanup = cleanup
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.testingEnded, use: receive)
    }

    @Sendable package func receive(_ call: InternalRequest<StudyTestingEnded>) async throws -> TestRunRemoval {
        guard call.body.studyId == (try call.parameter("studyId")) else {
            throw APIError.badRequest(InternalCalls.testingEnded.malformedBody)
        }
        return try await cleanup.testingEnded(call.body)
    }
}
