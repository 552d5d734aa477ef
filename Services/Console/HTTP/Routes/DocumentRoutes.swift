import ConsoleCore
import Foundation
import Hummingbird
import JSONText
import ServiceKitHTTP
import StudyModels

/// For power users: the whole draft as JSON, downloaded (`/studies/{studyId}/document.json`) and
/// replaced by an edited one (`/studies/{studyId}/document`), validated by the admin API like any
/// other save, with `If-Match`.
package struct DocumentRoutes: Sendable {
    let pages: ConsolePages

    /// Larger than any study document a research team writes (the complete example is ~40 KB).
    static let maxDocumentBytes = 4 * 1024 * 1024

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/document.json", use: download)
        router.get("/studies/:studyId/document", use: page)
        router.post("/studies/:studyId/document", use: upload)
    }

    @Sendable func download(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let (document, revision) = try await pages.api.draft(studyId, token: session.token, logger: context.logger)
            let name = studyId.filter { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .eTag: revision,
                    .contentDisposition: "attachment; filename=\"\(name).json\"",
                ],
                body: .init(byteBuffer: ByteBuffer(string: Self.pretty(document))))
        }
    }

    @Sendable func page(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let state = try await pages.load(studyId, session: session, context: context)
            return documentPage(
                session, state: state, text: Self.pretty(state.draft), problems: [],
                saved: request.uri.queryParameters["saved"] != nil, status: .ok)
        }
    }

    @Sendable func upload(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let text = (form ?? FormFields()).text(file: "documentFile", orPasted: "document")
            let state = try await pages.load(studyId, session: session, context: context)
            guard text.utf8.count <= Self.maxDocumentBytes else {
                return documentPage(
                    session, state: state, text: "", problems: [.init(pointer: "", message: "The document is larger than 4 MB.")], saved: false,
                    status: .contentTooLarge)
            }
            let document: JSONValue
            do {
                document = try JSONValue.parse(Array(text.utf8), budget: .studyDocument)
            } catch {
                return documentPage(
                    session, state: state, text: text, problems: [.init(pointer: "", message: "This is not JSON: \(error)")], saved: false,
                    status: .unprocessableContent)
            }
            // The revision this page was drawn from: a draft changed since is not overwritten.
            let revision = form?["revision"] ?? state.revision
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in
                try await pages.api.saveDraft(studyId, document: document, precondition: .revision(revision), token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/document?saved=1")
            case .failure(let error) where [400, 409, 412, 422].contains(error.status):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return documentPage(session, state: state, text: text, problems: problems, saved: false, status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    func documentPage(
        _ session: ConsoleSession, state: StudyPageState, text: String, problems: [ValidationProblem], saved: Bool,
        status: HTTPResponse.Status
    ) -> Response {
        let view = DocumentView(
            text: text, revision: state.revision, editable: state.editable, saved: saved,
            problemReport: ProblemReport(
                "Not saved",
                toFix: StudyPageModels.problems(
                    problems, page: nil, values: FormFields(), sections: state.sections, draft: state.draft, studyId: state.summary.studyId)))
        return pages.render(view, title: "Study document · \(state.summary.name)", session: session, state: state, current: "document", status: status)
    }

    /// The document indented, keys in order, as a person reads and edits it.
    static func pretty(_ document: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(document)).map { String(decoding: $0, as: UTF8.self) } ?? document.serialized()
    }
}

/// `document.mustache`: the whole study document as JSON, to read or edit.
struct DocumentView: PageView {
    static let template = "document"
    var text: String
    /// The draft's revision the text was read from (saving over a newer one is refused).
    var revision: String
    var editable: Bool
    var saved: Bool
    var problemReport: ProblemReport?
}
