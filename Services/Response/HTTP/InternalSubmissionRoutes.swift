import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /internal/v1/studies/{studyId}/participants/{appTokenSHA256}/submissions?since=`: the
/// responses that arrived from one participant, for the run states registration computes
/// (signed; only the registration service may call it).
package struct InternalSubmissionRoutes {
    package let catalog: StudyCatalog
    package let submissions: SubmissionStore

    package init(catalog: StudyCatalog, submissions: SubmissionStore) {
        self.catalog = catalog
        self.submissions = submissions
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.get("/v1/studies/:studyId/participants/:appTokenSHA256/submissions", use: list)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> ParticipantSubmissions {
        try context.requireCaller(.registration, "reads participants' submissions for their runs")
        let studyId = try context.parameters.decoded("studyId")
        let hash = try context.parameters.decoded("appTokenSHA256").lowercased()
        guard hash.utf8.count == 64, hash.utf8.allSatisfy({ ("0"..."9").contains(Unicode.Scalar($0)) || ("a"..."f").contains(Unicode.Scalar($0)) }) else {
            throw APIError.badRequest("the participant is named by 64 hexadecimal digits")
        }
        let formatter = ISO8601DateFormatter()
        guard let text = request.uri.queryParameters["since"], text.utf8.count <= 40, let since = formatter.date(from: String(text)) else {
            throw APIError.badRequest("since must be an ISO 8601 instant", field: "since")
        }
        guard let study = try await catalog.study(studyId) else { throw APIError.notFound("study \(studyId) is not known here") }
        return try await submissions.submissions(studyKey: study.key, appTokenSHA256: hash, since: since)
    }
}

extension ParticipantSubmissions: ResponseEncodable {}
