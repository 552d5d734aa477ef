import PDFText
import StudyModels

/// The consent document as a participant signs it, for the team to read before it goes out:
/// the document the apps are sent (`Consent.signedDocumentHTML`: the study's HTML, or each
/// section's title and "learn more" text) in one language, then the signature lines the apps
/// ask for (the participant's, a legally authorised representative's where the study allows
/// one, and each extra signature). The apps render and sign it on the phone with their own fonts
/// and layout; the text and the lines are these.
package enum ConsentPreviewPDF {
    package static let footer = "Preview: the app lays this document out on the phone and adds the signatures"

    /// The file, and how many characters the standard fonts could not draw (shown as `?`).
    package static func pdf(_ document: StudyDocument, language: String?, versionLabel: String) -> (bytes: [UInt8], undrawable: Int) {
        let consent = document.consent
        let review = consent.review
        var page = TextDocument()
        page.add(review.title?.text(for: language) ?? "Consent", style: .title, spaceBefore: 0)
        page.add(
            "\(document.name.text(for: language)) \u{B7} consent version \(versionLabel) \u{B7} \(language.map(LanguageNames.name) ?? "default language")",
            style: .small)
        for block in HTMLText.blocks(consent.signedDocumentHTML(language: language)) {
            switch block.kind {
            case .heading: page.add(block.text, style: .heading, spaceBefore: 14)
            case .paragraph: page.add(block.text, style: .body)
            case .listItem: page.add(block.text, style: .item, spaceBefore: 4)
            }
        }
        page.add(review.signatureTitle?.text(for: language) ?? "Signatures", style: .heading, spaceBefore: 24)
        let blank = "______________________________"
        func signer(_ who: String) {
            page.add("\(who)'s name: \(blank)", style: .body, spaceBefore: 14)
            page.add("Signature: \(blank)   Date: ____________", style: .body, spaceBefore: 14)
        }
        signer("Participant")
        if review.consentByLAR {
            page.add("Or, for a participant who cannot consent themselves:", style: .small, spaceBefore: 14)
            signer("Legally authorised representative")
            page.add("Relationship to the participant: \(blank)", style: .body, spaceBefore: 14)
        }
        if review.additionalSignature {
            for label in review.signatures { signer(label.text(for: language)) }
        }
        return (page.pdf(footer: footer), page.undrawable)
    }
}
