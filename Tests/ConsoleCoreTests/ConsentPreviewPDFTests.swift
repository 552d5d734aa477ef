import ConsoleCore
import Foundation
import StudyModels
import Testing
import TestSupport

/// The consent document as a participant signs it, previewed before it goes out: read back with
/// poppler's `pdftotext`, as any PDF reader reads it.
@Suite struct ConsentPreviewPDFTests {
    static func text(of pdf: [UInt8]) throws -> String {
        try ExternalTool.run("pdftotext", ["-layout", "-", "-"], input: Data(pdf))
    }

    @Test(.needsPrograms("pdftotext")) func theSectionsAndSignatureLinesReadBackInEachLanguage() throws {
        var study = try PublishPreviewTests.example()
        study.consent.review.consentByLAR = true
        study.consent.review.additionalSignature = true
        study.consent.review.signatures = [LocalizedText(translations: ["en": "Witness", "es": "Testigo"])]
        study.consent.visualScreens[1].text = LocalizedText(translations: ["en": "We collect your answers.", "es": "Recogemos sus respuestas."])
        let (english, undrawable) = ConsentPreviewPDF.pdf(study, language: "en", versionLabel: "1.2")
        #expect(undrawable == 0)
        let text = try Self.text(of: english)
        for expected in [
            "Sleep Well", "consent version 1.2", "English", "Overview", "The full description that goes into the signed document.",
            "Data gathering", "We collect your answers.", "Participant's name:", "Legally authorised representative's name:",
            "Relationship to the participant:", "Witness's name:", ConsentPreviewPDF.footer, "page 1 of 1",
        ] {
            #expect(text.contains(expected), "\(expected) in\n\(text)")
        }
        let spanish = try Self.text(of: ConsentPreviewPDF.pdf(study, language: "es", versionLabel: "1.2").bytes)
        #expect(spanish.contains("Recogemos sus respuestas.") && spanish.contains("Testigo's name:") && spanish.contains("Spanish"))
    }

    @Test(.needsPrograms("pdftotext")) func aLongHTMLDocumentWrapsWithinTheMarginsAndBreaksAcrossPages() throws {
        var study = try PublishPreviewTests.example()
        let paragraph = String(repeating: "Your answers are kept on servers of the study team, coded, and never sold. ", count: 8)
        study.consent.review.type = .html
        study.consent.review.html = LocalizedText(
            "<h1>Agreement &amp; terms</h1><script>alert('no')</script>"
                + String(repeating: "<p>\(paragraph)</p><ul><li>Item one</li><li>Item two</li></ul>", count: 40)
                + "<p>Stra\u{DF}e, na\u{EF}ve, caf\u{E9} &#233; &#x263A;</p>")
        let (pdf, undrawable) = ConsentPreviewPDF.pdf(study, language: "en", versionLabel: "1.2")
        #expect(undrawable == 1, "the smiling face is outside what the standard fonts draw")
        let text = try Self.text(of: pdf)
        #expect(text.contains("Agreement & terms") && !text.contains("alert"))
        #expect(text.contains("Straße, naïve, café é ?"))
        #expect(text.contains("- Item one"))
        let pages = text.components(separatedBy: "\u{0C}").filter { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
        #expect(pages.count > 3)
        #expect(text.contains("page 1 of \(pages.count)"))
        // Wrapped within the page: no line of the text is longer than a line of the page holds.
        let longest = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces).count }.max() ?? 0
        #expect(longest < 110, "a line of \(longest) characters ran past the margin")
    }
}
