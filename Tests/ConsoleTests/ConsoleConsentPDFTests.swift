import ConsoleCore
import Foundation
import HTTPTypes
import StudyModels
import Testing
import TestSupport

/// A consent document the IRB approved as a PDF: uploaded on the consent page, kept among the
/// study's files, its text read into the own-document field for the team to check, and saved only
/// when they save the page. What cannot be read is refused in words, with the PDF still kept.
@Suite(.needsCluster, .needsPrograms("pdftotext", "prlimit")) struct ConsoleConsentPDFTests {
    /// A PDF with the approved text, made by the console's own consent preview.
    static func approvedPDF() throws -> [UInt8] {
        var study = try StudySectionTests.study(try StudySectionTests.example())
        study.consent.review.type = .html
        study.consent.review.html = LocalizedText(
            "<h1>Consent to take part</h1><p>You may leave the study at any time; your answers stay coded.</p>")
        return ConsentPreviewPDF.pdf(study, language: "en", versionLabel: "1.0").bytes
    }

    @Test func anApprovedPDFsTextFillsTheDocumentUntilTheTeamSavesIt() async throws {
        try await ConsoleFixture.run { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let page = try await f.browser.get("/studies/CONSOLE1/consent")
            #expect(page.html.contains(#"id="consent-pdf-form""#))
            let csrf = try #require(page.input("csrf"))
            let before = try await f.draft().json

            let read = try await f.browser.post(
                "/studies/CONSOLE1/consent-pdf", [("csrf", csrf), ("language", "en")], files: [("upload", "approved consent.pdf", try Self.approvedPDF())])
            #expect(read.status == .ok)
            #expect(read.html.contains(#"id="from-pdf""#) && read.html.contains("approved consent.pdf"), "\(read.html)")
            #expect(read.html.contains("You may leave the study at any time; your answers stay coded."))
            #expect(read.html.contains(#"<option value="html" selected>"#))
            // Kept among the study's files; the draft not changed yet.
            #expect(try await f.browser.get("/studies/CONSOLE1/files").html.contains("approved consent.pdf"))
            #expect(NSDictionary(dictionary: try await f.draft().json) == NSDictionary(dictionary: before))

            // Saved as the page shows it: the document of its own, in English.
            let saved = try await f.browser.post("/studies/CONSOLE1/consent", f.browser.form(of: read, [:]))
            #expect(saved.status == .seeOther, "\(saved.html)")
            let review = try #require((try await f.draft().json["consent"] as? [String: Any])?["review"] as? [String: Any])
            #expect(review["type"] as? String == "html")
            let html = try #require(review["html"] as? String ?? (review["html"] as? [String: Any])?["en"] as? String)
            #expect(html.hasPrefix("<p>") && html.contains("You may leave the study at any time; your answers stay coded."), "\(html)")
        }
    }

    @Test func whatCannotBeReadIsRefusedInWordsAndNothingIsSaved() async throws {
        try await ConsoleFixture.run { f in
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)
            let csrf = try #require(try await f.browser.get("/studies/CONSOLE1/consent").input("csrf"))
            let before = try await f.draft().json
            // Not a PDF: refused by study-metadata, nothing stored.
            let script = try await f.browser.post(
                "/studies/CONSOLE1/consent-pdf", [("csrf", csrf)], files: [("upload", "consent.html", Array("<script>x</script>".utf8))])
            #expect(script.status == .unsupportedMediaType)
            #expect(script.html.contains("consent.html was not stored"))
            // A PDF the reader cannot open: kept, and said so.
            let broken = try await f.browser.post(
                "/studies/CONSOLE1/consent-pdf", [("csrf", csrf)], files: [("upload", "broken.pdf", Array("%PDF-1.7\nno objects".utf8))])
            #expect(broken.status == .unprocessableContent)
            #expect(broken.html.contains("The text of broken.pdf could not be read") && broken.html.contains("kept among the study"))
            #expect(try await f.browser.get("/studies/CONSOLE1/files").html.contains("broken.pdf"))
            // No file, or a language the page does not offer.
            #expect(try await f.browser.post("/studies/CONSOLE1/consent-pdf", [("csrf", csrf)], files: []).html.contains("Choose the PDF to read."))
            let language = try await f.browser.post(
                "/studies/CONSOLE1/consent-pdf", [("csrf", csrf), ("language", "fr")], files: [("upload", "a.pdf", try Self.approvedPDF())])
            #expect(language.status == .unprocessableContent && language.html.contains("English or Spanish"))
            // Without the form token, nothing is stored.
            #expect(try await f.browser.post("/studies/CONSOLE1/consent-pdf", [], files: [("upload", "c.pdf", try Self.approvedPDF())]).status == .forbidden)
            #expect(!(try await f.browser.get("/studies/CONSOLE1/files").html.contains("c.pdf")))
            #expect(NSDictionary(dictionary: try await f.draft().json) == NSDictionary(dictionary: before))
        }
    }
}
