import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /internal/v1/submissions?after=`: the responses stored after response `after`, a page
/// at a time, for the run states registration keeps (signed; only the registration service may
/// call it).
package struct InternalSubmissionRoutes {
    package let submissions: SubmissionStore

    package init(submissions: SubmissionStore) {
        self.submissions = submissions
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.get("/v1/submissions", use: page)
    }

    @Sendable package func page(_ request: Request, context: ServiceRequestContext) async throws -> SubmissionFeed {
        try context.requireCaller(.registration, "reads the responses stored for participants' runs")
        // A response id: 0 to 18 digits, so it is never past Int64.
        guard let text = request.uri.queryParameters["after"], (1...18).contains(text.utf8.count),
              text.utf8.allSatisfy({ (48...57).contains($0) }), let after = Int64(text)
        else {
            throw APIError.badRequest("after must be a response id: a whole number of at most 18 digits", field: "after")
        }
        return try await submissions.page(after: after)
    }
}

extension SubmissionFeed: ResponseEncodable {}
