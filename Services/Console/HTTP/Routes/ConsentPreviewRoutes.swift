import ConsoleCore
import Foundation
import Hummingbird
import NIOCore
import ServiceKitHTTP
import StudyModels

/// `GET /studies/{studyId}/consent-preview.pdf?language=`: the draft's consent document as a
/// participant signs it (`ConsentPreviewPDF`), in one of the study's languages, before it is
/// published. Anyone who may read the study may read it.
package struct ConsentPreviewRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/consent-preview.pdf", use: preview)
    }

    @Sendable func preview(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let asked = request.uri.queryParameters["language"].map(String.init)
        return try await pages.signedIn(request, context) { session, _ in
            let state = try await pages.load(studyId, session: session, context: context)
            guard let draft = state.document else {
                throw APIError.conflict("the draft cannot be read as a study yet: fix what its pages list first")
            }
            let languages = Self.languages(of: draft)
            // Compared by scalars: the code names a file and a language, not text to match loosely.
            guard let language = asked.map({ code in languages.first { $0.unicodeScalars.elementsEqual(code.unicodeScalars) } }) ?? languages.first
            else {
                throw APIError.notFound("the study has no language \(asked ?? ""); it has \(languages.joined(separator: ", "))")
            }
            let label = draft.consent.versionLabel.map { "\($0), draft" } ?? "of the draft, not yet published"
            let (bytes, _) = ConsentPreviewPDF.pdf(draft, language: language, versionLabel: label)
            return Response(
                status: .ok,
                headers: [
                    .contentType: "application/pdf", .cacheControl: "no-store",
                    .contentDisposition: "inline; filename=\"consent-preview-\(language).pdf\"",
                ],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// The study's languages, its default (English) first.
    static func languages(of draft: StudyDocument) -> [String] {
        ["en"] + draft.languages.filter { !$0.unicodeScalars.elementsEqual("en".unicodeScalars) }
    }
}
