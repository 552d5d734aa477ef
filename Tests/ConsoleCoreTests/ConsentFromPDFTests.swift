import ConsoleCore
import Foundation
import StudyModels
import Testing
import TestSupport

/// A consent document the IRB approved as a PDF, as the apps can show it: its text read by
/// poppler's `pdftotext` inside limits, then as HTML paragraphs for the consent's own document.
@Suite struct ConsentFromPDFTests {
    @Test func paragraphsLinesBulletsAndPagesBecomeParagraphs() throws {
        let text = "Purpose of the study\n\nWe ask about your sleep\nevery morning for two weeks.\n\u{2022} You may stop at any time.\n"
            + "\u{F0B7} Your answers are coded.\nA word broken at a line's end is con-\nsent, kept whole.\u{0C}Page two starts here.\r\nSame paragraph."
        let html = try #require(ConsentFromPDF.html(fromText: text))
        #expect(html.components(separatedBy: "\n") == [
            "<p>Purpose of the study</p>",
            "<p>We ask about your sleep every morning for two weeks.</p>",
            "<p>\u{2022} You may stop at any time.</p>",
            "<p>\u{2022} Your answers are coded. A word broken at a line&#39;s end is con-sent, kept whole.</p>",
            "<p>Page two starts here. Same paragraph.</p>",
        ], "\(html)")
    }

    /// Whatever the PDF's text says, it is text: no markup, no control characters.
    @Test func theTextIsEscapedAndControlsAreDropped() throws {
        let html = try #require(ConsentFromPDF.html(fromText: "<script>alert(1)</script> & \u{0007}bell\u{200B}s \u{E000}glyph"))
        #expect(!html.contains("<script>") && html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; bells glyph"), "\(html)")
    }

    /// No words (a scanned page is a picture of text), or far more than a consent document: none.
    @Test func noWordsOrTooMuchTextIsNone() {
        #expect(ConsentFromPDF.html(fromText: "") == nil)
        #expect(ConsentFromPDF.html(fromText: " \n\u{0C}\n \t ") == nil)
        #expect(ConsentFromPDF.html(fromText: "12 - 3 / 4\n\n5") == nil)
        #expect(ConsentFromPDF.html(fromText: String(repeating: "a", count: ConsentFromPDF.maxScalars + 1)) == nil)
        #expect(ConsentFromPDF.html(fromText: String(repeating: "word\n\n", count: ConsentFromPDF.maxParagraphs + 1)) == nil)
        #expect(ConsentFromPDF.html(fromText: String(repeating: "word\n\n", count: ConsentFromPDF.maxParagraphs)) != nil)
    }

    /// A real PDF (the console's own consent preview) read back by pdftotext in its limits.
    @Test(.needsPrograms("pdftotext", "prlimit")) func aPDFsTextIsReadInsideItsLimits() async throws {
        var study = try PublishPreviewTests.example()
        study.consent.review.type = .html
        study.consent.review.html = LocalizedText("<h1>Agreement</h1><p>Your answers are kept on servers of the study team.</p>")
        let pdf = ConsentPreviewPDF.pdf(study, language: "en", versionLabel: "1.0").bytes
        let text = try await PopplerPDFText().text(ofPDF: pdf)
        #expect(text.contains("Your answers are kept on servers of the study team."), "\(text)")
        let html = try #require(ConsentFromPDF.html(fromText: text))
        #expect(html.hasPrefix("<p>") && html.contains("Your answers are kept on servers of the study team."), "\(html)")
    }

    /// What is not a PDF the reader can open is a clear failure, not a crash or a hang.
    @Test(.needsPrograms("pdftotext", "prlimit")) func aBrokenPDFIsAFailureInWords() async throws {
        for bytes in [Array("%PDF-1.7\nnot really a PDF".utf8), Array(repeating: 0xFF, count: 4096), []] {
            await #expect(throws: PDFTextFailure.self) { try await PopplerPDFText().text(ofPDF: bytes) }
        }
    }
}
