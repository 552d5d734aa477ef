import AdminContracts
import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

extension StudyRoutes {
    /// A consent document the IRB approved as a PDF (`POST /studies/{id}/consent-pdf`, editors):
    /// kept first among the study's files (study-metadata checks it is a PDF within its size),
    /// then its text read (`PDFTextReading`) into the consent page's own-document field in the
    /// language chosen. The page comes back with it, not saved: the team checks the text against
    /// the PDF and saves the page as any other. A PDF whose text cannot be read is still kept,
    /// and the page says why.
    @Sendable func consentFromPDF(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let state = try await pages.load(studyId, session: session, context: context)
            let section = StudySection.consent
            let drawn = pages.savedForm(section, state: state)
            guard state.editable else {
                return pages.errorPage(
                    session, status: .forbidden, heading: "Not allowed",
                    message: "Changing the consent needs the editor role, on a study that is not closed.")
            }
            func refused(_ message: String, _ status: HTTPResponse.Status) async throws -> Response {
                try await sectionPage(
                    session, state: state, section: section, submitted: drawn.form.values,
                    problems: [.init(pointer: "/consent/review/html", message: message)], base: drawn.base, status: status, context: context)
            }
            let language = form?["language"] ?? "en"
            guard ConsentFromPDF.languages.contains(where: { $0.unicodeScalars.elementsEqual(language.unicodeScalars) }) else {
                return try await refused("The document's language must be English or Spanish.", .unprocessableContent)
            }
            guard let file = form?.uploads[FormFields.binaryFileField], !file.bytes.isEmpty else {
                return try await refused("Choose the PDF to read.", .unprocessableContent)
            }
            // Kept before it is read: whatever its text, the approved document stays with the study.
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.uploadFile(file.bytes, name: file.filename, to: studyId, token: session.token, logger: context.logger)
            }
            let stored: StudyFile
            switch outcome {
            case .success(let file): stored = file
            case .failure(let error) where [409, 413, 415, 422].contains(error.status):
                return try await refused(
                    "\(file.filename) was not stored: \(error.message)", HTTPResponse.Status(code: error.status ?? 422))
            case .failure(let error): throw error
            }
            let kept = "/studies/\(AdminAPIClient.segment(studyId))/files"
            guard stored.contentType == "application/pdf" else {
                return try await refused(
                    "\(stored.name) is an image, not a PDF (it is kept among the study's files).", .unprocessableContent)
            }
            let text: String
            do throws(PDFTextFailure) {
                text = try await pdfText.text(ofPDF: file.bytes)
            } catch {
                return try await refused(
                    "The text of \(stored.name) could not be read: \(error.description). The PDF is kept among the study's files.",
                    .unprocessableContent)
            }
            guard let html = ConsentFromPDF.html(fromText: text) else {
                return try await refused(
                    "\(stored.name) has no text to read (a scanned page is a picture of text), or more than a consent document has: type the document instead. The PDF is kept among the study's files.",
                    .unprocessableContent)
            }
            var values = drawn.form.values
            values.set("/consent/review/type", "html")
            values.set("/consent/review/html/\(language)", html)
            return try await sectionPage(
                session, state: state, section: section, submitted: values, problems: [], base: drawn.base, status: .ok, unsaved: true,
                fromPDF: .init(name: stored.name, href: kept, language: LanguageNames.name(language)), context: context)
        }
    }
}
