import Foundation
import Hummingbird
import InternalContracts
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /internal/v1/submissions?after=`: the responses stored after response `after`, a page
/// at a time, and `GET /internal/v1/submission-settlements?after=`: what became of those that
/// failed processing, for the run states registration keeps (signed; only the registration
/// service may call them).
package struct InternalSubmissionRoutes {
    package let submissions: SubmissionStore

    package init(submissions: SubmissionStore) {
        self.submissions = submissions
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.submissionFeed, use: page)
        group.on(InternalCalls.settlementFeed, use: settlements)
    }

    /// What became of the responses that failed processing, in the order they were settled.
    @Sendable package func settlements(_ call: InternalRequest<NoContent>) async throws -> SettlementFeed {
        try await submissions.settlements(after: try Self.after(call.request, what: "a settlement number"))
    }

    /// The `after` parameter: 1 to 18 digits, so it is never past Int64.
    private static func after(_ request: Request, what: String) throws -> Int64 {
        guard let text = request.uri.queryParameters["after"], (1...18).contains(text.utf8.count),
            text.utf8.allSatisfy({ (48...57).contains($0) }), let after = Int64(text)
        else {
            throw APIError.badRequest("after must be \(what): a whole number of at most 18 digits", field: "after")
        }
        return after
    }

    @Sendable package func page(_ call: InternalRequest<NoContent>) async throws -> SubmissionFeed {
        try await submissions.page(after: try Self.after(call.request, what: "a response id"))
    }
}
