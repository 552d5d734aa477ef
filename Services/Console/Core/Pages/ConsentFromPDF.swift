import StudyModels

/// A consent document the IRB approved as a PDF, as the apps can show it: its text (as
/// `PDFTextReading` gives it) in HTML paragraphs, for the consent page's own-document field. The
/// MyStudies apps show the document to review as HTML (iOS in ResearchKit's review step, Android
/// in a web view that cannot show a PDF) and make the signed PDF from it, so the approved text
/// reaches a participant only this way. Layout, tables and images stay in the PDF, which the
/// study keeps among its files; the team checks the text against it before saving.
package enum ConsentFromPDF {
    /// The most text taken from one PDF (scalars): a long consent document is a few tens of
    /// thousands; past this, the file is not a consent document.
    package static let maxScalars = 400_000
    /// The most paragraphs.
    package static let maxParagraphs = 5_000

    /// The languages whose document field the text may fill (the console's localized fields).
    package static let languages = ["en", "es"]

    /// The text as paragraphs of HTML; nil when it has no words (a scanned page is an image)
    /// or is longer than a consent document can be.
    ///
    /// A blank line or a page break ends a paragraph; a line starting with a bullet starts one;
    /// the lines of a paragraph are joined by a space, or by nothing after a hyphen ending a line
    /// before a lowercase letter (a word broken across lines keeps its hyphen rather than guess
    /// whether it had one). Control characters other than line ends and tabs are dropped; text
    /// is escaped, so nothing in the PDF becomes markup.
    package static func html(fromText text: String) -> String? {
        guard text.unicodeScalars.count <= maxScalars else { return nil }
        var paragraphs: [String] = []
        var current = String.UnicodeScalarView()
        func end() {
            let trimmed = String(current).trimmingCharacters(in: .whitespaces)
            if !trimmed.isEmpty { paragraphs.append(trimmed) }
            current = String.UnicodeScalarView()
        }
        // Lines by scalars: a CR LF is one Character, and a page break (form feed) is a line end too.
        var lines: [String.UnicodeScalarView] = [String.UnicodeScalarView()]
        var previousCR = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n" where previousCR: break
            case "\r", "\n": lines.append(String.UnicodeScalarView())
            case "\u{0C}": lines.append(String.UnicodeScalarView()); lines.append(String.UnicodeScalarView())
            case "\t": lines[lines.count - 1].append(" ")
            // The Symbol font's bullet, in its private-use code: a bullet.
            case "\u{F0B7}": lines[lines.count - 1].append("\u{2022}")
            default:
                if !scalar.properties.generalCategory.isDropped { lines[lines.count - 1].append(scalar) }
            }
            previousCR = scalar == "\r"
        }
        for line in lines {
            let words = String(line).trimmingCharacters(in: .whitespaces)
            if words.isEmpty {
                end()
                continue
            }
            if let first = words.unicodeScalars.first, bullets.contains(first) { end() }
            if let last = current.last, let next = words.unicodeScalars.first {
                let brokenWord = last == "-" && next.properties.isLowercase
                if !brokenWord { current.append(" ") }
            }
            current.append(contentsOf: words.unicodeScalars)
            guard paragraphs.count < maxParagraphs else { return nil }
        }
        end()
        guard !paragraphs.isEmpty, paragraphs.count <= maxParagraphs,
            paragraphs.contains(where: { $0.unicodeScalars.contains { $0.properties.isAlphabetic } })
        else { return nil }
        return paragraphs.map { "<p>\(HTMLText.escape($0))</p>" }.joined(separator: "\n")
    }

    /// Bullets that start a list item in a PDF's text.
    static let bullets: Set<Unicode.Scalar> = ["\u{2022}", "\u{25AA}", "\u{25CF}", "\u{25E6}", "\u{2023}", "\u{2043}"]
}

extension Unicode.GeneralCategory {
    /// Not text a document shows: controls, formats, private use (a font's own glyph codes),
    /// surrogates and unassigned code points.
    fileprivate var isDropped: Bool {
        switch self {
        case .control, .format, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }
}
