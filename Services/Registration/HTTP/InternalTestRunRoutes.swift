import Foundation
import Hummingbird
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
        group.post("/v1/studies/:studyId/testing-ended", use: receive)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> TestRunCleanup.Removed {
        try context.requireCaller(.studyMetadata, "reports the end of a study's test run")
        let studyId = try context.parameters.decoded("studyId")
        let buffer = try await request.body.collect(upTo: 16 * 1024)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let ended = try? decoder.decode(StudyTestingEnded.self, from: Data(buffer: buffer)), ended.studyId == studyId else {
            throw APIError.badRequest("the body is not the end of this study's test run")
        }
        return try await cleanup.testingEnded(ended)
    }
}

extension TestRunCleanup.Removed: ResponseEncodable {}
