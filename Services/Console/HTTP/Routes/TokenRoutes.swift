import AdminContracts
import ConsoleCore
import Foundation
import Hummingbird
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's enrollment tokens (`/studies/{studyId}/tokens`): the batches with their used and
/// unused counts (viewer); a new batch, and each batch's CSV and printable QR sheet (editor),
/// passed on from the response service as they arrive.
package struct TokenRoutes: Sendable {
    let pages: ConsolePages

    /// The largest batch the form offers (the response service's own limit may be lower).
    static let maxBatch = 100_000

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/tokens", use: show)
        router.post("/studies/:studyId/tokens", use: create)
        router.get("/studies/:studyId/tokens/:batchId/tokens.csv") { request, context in
            try await download(request, context, file: AdminCalls.tokenBatchCSV)
        }
        router.get("/studies/:studyId/tokens/:batchId/qr.pdf") { request, context in
            try await download(request, context, file: AdminCalls.tokenBatchSheet)
        }
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let created = request.uri.queryParameters["created"].flatMap { UUID(uuidString: String($0)) }
        return try await pages.signedIn(request, context) { session, _ in
            try await tokensPage(studyId, session: session, context: context, created: created, count: "", problems: [], status: .ok)
        }
    }

    @Sendable func create(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let text = FormField.trimmed(form?["count"])
            guard let count = Int(text), (1...Self.maxBatch).contains(count) else {
                return try await tokensPage(
                    studyId, session: session, context: context, created: nil, count: text,
                    problems: [.init(pointer: "/count", message: "Enter how many tokens to make: 1 to \(Self.maxBatch).")],
                    status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.createTokenBatch(count: count, in: studyId, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let batch):
                return PageRenderer.redirect(
                    to: "/studies/\(AdminAPIClient.segment(studyId))/tokens?created=\(batch.batchId.uuidString.lowercased())")
            case .failure(let error):
                guard [400, 422].contains(error.status) else { throw error }
                return try await tokensPage(
                    studyId, session: session, context: context, created: nil, count: text,
                    problems: [.init(pointer: "/count", message: error.message)], status: .unprocessableContent)
            }
        }
    }

    /// The response service's file, passed on as it arrives, with its type and file name.
    func download(
        _ request: Request, _ context: ServiceRequestContext, file: AdminEndpoint<NoContent, OpaqueBody>
    ) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        guard let batchId = UUID(uuidString: try context.parameters.decoded("batchId")) else {
            return pages.errorPage(for: .notFound("No such batch."))
        }
        return try await pages.signedIn(request, context) { session, _ in
            let download = try await pages.api.download(
                file, ["studyId": studyId, "batchId": batchId.uuidString.lowercased()], token: session.token, logger: context.logger)
            return download.response
        }
    }

    func tokensPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, created: UUID?, count: String,
        problems: [ValidationProblem], status: HTTPResponse.Status
    ) async throws -> Response {
        async let batches = pages.api.tokenBatches(of: studyId, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let editor = (state.role ?? .viewer) >= .editor
        let rows = try await batches.reversed().map { batch in
            TokensView.Batch(
                batchId: batch.batchId.uuidString.lowercased(), shortId: String(batch.batchId.uuidString.prefix(8)).lowercased(),
                count: batch.count.formatted(), used: batch.used.formatted(), unused: (batch.count - batch.used).formatted(),
                createdAt: StudyPageModels.timestamp(batch.createdAt), createdBy: batch.createdBy, isNew: batch.batchId == created,
                downloads: editor)
        }
        let view = TokensView(
            batches: rows, hasBatches: !rows.isEmpty, mayCreate: editor, count: count, maxBatch: Self.maxBatch,
            problemReport: ProblemReport(heading: "No batch was made", problems))
        return pages.render(view, title: "Enrollment tokens · \(state.summary.name)", session: session, state: state, current: "tokens", status: status)
    }
}

/// `tokens.mustache`: the study's token batches, and the form for a new one.
struct TokensView: PageView {
    static let template = "tokens"

    struct Batch {
        var batchId: String
        var shortId: String
        var count: String
        var used: String
        var unused: String
        var createdAt: String
        var createdBy: String
        /// The batch just made.
        var isNew: Bool
        /// The CSV and the QR sheet are offered (editors).
        var downloads: Bool
    }

    var batches: [Batch]
    var hasBatches: Bool
    var mayCreate: Bool
    /// The count typed into the form.
    var count: String
    var maxBatch: Int
    var problemReport: ProblemReport?
}
