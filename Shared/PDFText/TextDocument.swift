/// A document of flowing text on A4 pages, in the standard fonts Helvetica and Helvetica-Bold:
/// paragraphs wrapped to the page's width and broken across pages, with a running footer. What
/// the standard fonts cannot draw (outside Latin-1) is printed as `?` and counted, so the one
/// who reads the file can be told.
public struct TextDocument: Sendable {
    public enum Style: Sendable {
        case title
        case heading
        case body
        case item
        case small

        var size: Double {
            switch self {
            case .title: 16
            case .heading: 12.5
            case .body, .item: 10.5
            case .small: 8.5
            }
        }

        var bold: Bool { self == .title || self == .heading }
    }

    static let pageWidth = 595.0
    static let pageHeight = 842.0
    static let margin = 56.0
    static let footerSpace = 28.0
    /// A document never has more pages: past it, the text is cut with a line that says so.
    public static let maxPages = 200

    struct Line {
        var style: Style
        var text: String
        var indent: Double
        var spaceBefore: Double
    }

    private var lines: [Line] = []
    /// Characters the standard fonts cannot draw.
    public private(set) var undrawable = 0

    public init() {}

    /// Adds `text` as one paragraph in `style`, wrapped to the page.
    public mutating func add(_ text: String, style: Style, spaceBefore: Double? = nil) {
        let indent = style == .item ? 14.0 : 0
        let width = (Self.pageWidth - 2 * Self.margin - indent) * 1000 / style.size
        undrawable += text.unicodeScalars.filter { !PDFText.isDrawable($0) && !$0.properties.isWhitespace }.count
        var first = true
        for line in Self.wrap(text, width: width, bold: style.bold) {
            lines.append(Line(
                style: style, text: first && style == .item ? "- " + line : line, indent: first && style == .item ? 0 : indent,
                spaceBefore: first ? (spaceBefore ?? style.size * 0.8) : 0))
            first = false
        }
    }

    /// Words of `text` into lines no wider than `width` (thousandths of the size); a word wider
    /// than a line is broken where it must be.
    static func wrap(_ text: String, width: Double, bold: Bool) -> [String] {
        var lines: [String] = []
        var current = String.UnicodeScalarView()
        var currentWidth = 0
        let space = HelveticaMetrics.width(" ", bold: bold)
        for word in text.unicodeScalars.split(whereSeparator: { $0.properties.isWhitespace }) {
            let wordWidth = word.reduce(0) { $0 + HelveticaMetrics.width($1, bold: bold) }
            if !current.isEmpty, Double(currentWidth + space + wordWidth) <= width {
                current.append(" ")
                current.append(contentsOf: word)
                currentWidth += space + wordWidth
                continue
            }
            if !current.isEmpty { lines.append(String(current)) }
            current = String.UnicodeScalarView()
            currentWidth = 0
            for scalar in word {
                let scalarWidth = HelveticaMetrics.width(scalar, bold: bold)
                if !current.isEmpty, Double(currentWidth + scalarWidth) > width {
                    lines.append(String(current))
                    current = String.UnicodeScalarView()
                    currentWidth = 0
                }
                current.append(scalar)
                currentWidth += scalarWidth
            }
        }
        if !current.isEmpty { lines.append(String(current)) }
        return lines
    }

    /// The file: the lines laid out page by page, each page with `footer` and its number.
    public func pdf(footer: String) -> [UInt8] {
        var pages: [[UInt8]] = []
        var content: [UInt8] = []
        var y = Self.pageHeight - Self.margin
        let bottom = Self.margin + Self.footerSpace
        var cut = false
        for line in lines {
            let height = line.style.size * 1.3 + line.spaceBefore
            if y - height < bottom, !content.isEmpty {
                guard pages.count + 1 < Self.maxPages else {
                    cut = true
                    break
                }
                pages.append(content)
                content = []
                y = Self.pageHeight - Self.margin
            }
            y -= height
            let font = line.style.bold ? "/F2" : "/F1"
            content += Array("BT \(font) \(PDFText.number(line.style.size)) Tf \(PDFText.number(Self.margin + line.indent)) \(PDFText.number(y)) Td (".utf8)
            content += PDFText.string(line.text)
            content += Array(") Tj ET\n".utf8)
        }
        if cut {
            content += Array("BT /F2 10.5 Tf \(PDFText.number(Self.margin)) \(PDFText.number(bottom)) Td (".utf8)
            content += PDFText.string("The document goes on past \(Self.maxPages) pages; the preview stops here.")
            content += Array(") Tj ET\n".utf8)
        }
        pages.append(content)
        var writer = PDFWriter()
        var bytes = writer.header()
        bytes += writer.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
        let kids = pages.indices.map { "\(5 + 2 * $0) 0 R" }.joined(separator: " ")
        bytes += writer.object(2, "<< /Type /Pages /Kids [\(kids)] /Count \(pages.count) >>")
        bytes += writer.object(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        bytes += writer.object(4, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
        for (index, page) in pages.enumerated() {
            let id = 5 + 2 * index
            var stream = page
            stream += Array("BT /F1 8 Tf \(PDFText.number(Self.margin)) \(PDFText.number(Self.margin)) Td (".utf8)
            stream += PDFText.string("\(footer) \u{B7} page \(index + 1) of \(pages.count)")
            stream += Array(") Tj ET\n".utf8)
            bytes += writer.object(
                id,
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(PDFText.number(Self.pageWidth)) \(PDFText.number(Self.pageHeight))] "
                    + "/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents \(id + 1) 0 R >>")
            bytes += writer.stream(id + 1, stream)
        }
        return bytes + writer.finish(root: 1)
    }
}
