import PDFText

/// A printable PDF of QR codes: A4 pages of twenty codes, each with its text printed under it in a
/// fixed-width face, and a heading on every page, with a sentence under it saying what to do
/// with a code.
///
/// Each code is a 1-bit inline image (a bit per module, hex-encoded), drawn without
/// interpolation, so a page of twenty stays a few kilobytes and prints with sharp edges. Fonts
/// are two of the standard fourteen (Helvetica, Courier-Bold), which every PDF reader has.
public struct QRSheet: Sendable {
    public struct Entry: Sendable {
        public var code: QRCode
        public var label: String

        public init(code: QRCode, label: String) {
            self.code = code
            self.label = label
        }
    }

    public var heading: String
    /// One line under the heading, for whoever is handed a code (what to do with it).
    public var note: String
    public var entries: [Entry]

    public init(heading: String, note: String = "", entries: [Entry]) {
        self.heading = heading
        self.note = note
        self.entries = entries
    }

    /// More pages than the sheet was started with: the page tree named them all at the start.
    public struct TooManyPages: Error, Sendable {}

    public static let columns = 4
    public static let rows = 5
    public static var perPage: Int { columns * rows }

    static let pageWidth = 595.0
    static let pageHeight = 842.0
    static let margin = 36.0
    static let headingSpace = 30.0
    static let codeSide = 110.0
    static let labelSize = 11.0

    public var pageCount: Int { Self.pageCount(for: entries.count) }

    public static func pageCount(for entries: Int) -> Int { max(1, (entries + perPage - 1) / perPage) }

    /// The document's bytes.
    public func pdf() -> [UInt8] {
        var stream = Stream(heading: heading, note: note, entryCount: entries.count)
        var bytes = stream.start()
        for page in 0..<pageCount {
            // The pages are exactly those counted, so this cannot run past them.
            bytes += (try? stream.page(entries[min(entries.count, page * Self.perPage)..<min(entries.count, (page + 1) * Self.perPage)])) ?? []
        }
        return bytes + stream.finish()
    }

    /// The same document written a page at a time, for sheets too large to hold in memory: the
    /// page count is known from the start, so the page tree is written first and each page as
    /// its codes arrive.
    public struct Stream: Sendable {
        let heading: String
        let note: String
        let pages: Int
        private var writer = PDFWriter()
        private var written = 0

        public init(heading: String, note: String = "", entryCount: Int) {
            self.heading = heading
            self.note = note
            self.pages = QRSheet.pageCount(for: entryCount)
        }

        /// Objects: 1 catalogue, 2 page tree, 3 and 4 fonts, then each page and its contents.
        func pageObject(_ page: Int) -> Int { 5 + 2 * page }

        public mutating func start() -> [UInt8] {
            var bytes = writer.header()
            bytes += writer.object(1, "<< /Type /Catalog /Pages 2 0 R >>")
            let kids = (0..<pages).map { "\(pageObject($0)) 0 R" }.joined(separator: " ")
            bytes += writer.object(2, "<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>")
            bytes += writer.object(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
            bytes += writer.object(4, "<< /Type /Font /Subtype /Type1 /BaseFont /Courier-Bold /Encoding /WinAnsiEncoding >>")
            return bytes
        }

        /// The next page, with up to `perPage` entries (more are left off). No more pages than the
        /// count given at the start: the page tree already named them all (`TooManyPages`).
        public mutating func page(_ entries: ArraySlice<Entry>) throws(TooManyPages) -> [UInt8] {
            guard written < pages else { throw TooManyPages() }
            let id = pageObject(written)
            let content = QRSheet.contents(
                heading: heading, note: note, page: written, of: pages, entries: entries.prefix(QRSheet.perPage))
            var bytes = writer.object(
                id,
                """
                << /Type /Page /Parent 2 0 R /MediaBox [0 0 \(QRSheet.number(QRSheet.pageWidth)) \(QRSheet.number(QRSheet.pageHeight))] \
                /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents \(id + 1) 0 R >>
                """)
            bytes += writer.stream(id + 1, content)
            written += 1
            return bytes
        }

        /// Blank pages for any the entries did not fill, then the cross-reference table.
        public mutating func finish() -> [UInt8] {
            var bytes: [UInt8] = []
            while written < pages { bytes += (try? page([])) ?? [] }
            return bytes + writer.finish(root: 1)
        }
    }

    static func contents(heading: String, note: String, page: Int, of pages: Int, entries: ArraySlice<Entry>) -> [UInt8] {
        var text = "BT /F1 12 Tf \(Self.number(Self.margin)) \(Self.number(Self.pageHeight - Self.margin - 12)) Td ("
        var bytes = Array(text.utf8) + Self.pdfString(heading) + Array(") Tj ET\n".utf8)
        if !note.isEmpty {
            text = "BT /F1 8 Tf \(Self.number(Self.margin)) \(Self.number(Self.pageHeight - Self.margin - 25)) Td ("
            bytes += Array(text.utf8) + Self.pdfString(note) + Array(") Tj ET\n".utf8)
        }
        let pageLabel = "page \(page + 1) of \(pages)"
        text = "BT /F1 9 Tf \(Self.number(Self.pageWidth - Self.margin - Double(pageLabel.count) * 4.6)) "
            + "\(Self.number(Self.pageHeight - Self.margin - 11)) Td (\(pageLabel)) Tj ET\n"
        bytes += Array(text.utf8)
        let cellWidth = (Self.pageWidth - 2 * Self.margin) / Double(Self.columns)
        let cellHeight = (Self.pageHeight - 2 * Self.margin - Self.headingSpace) / Double(Self.rows)
        for (index, entry) in entries.enumerated() {
            let column = index % Self.columns
            let row = index / Self.columns
            let left = Self.margin + Double(column) * cellWidth
            let top = Self.pageHeight - Self.margin - Self.headingSpace - Double(row) * cellHeight
            let x = left + (cellWidth - Self.codeSide) / 2
            let y = top - Self.codeSide
            bytes += Array("q \(Self.number(Self.codeSide)) 0 0 \(Self.number(Self.codeSide)) \(Self.number(x)) \(Self.number(y)) cm\n".utf8)
            bytes += Self.inlineImage(entry.code)
            bytes += Array("Q\n".utf8)
            // Courier's glyphs are 0.6 em wide, so the label centres exactly.
            let label = Self.pdfString(entry.label)
            let labelWidth = Double(label.count) * 0.6 * Self.labelSize
            let labelX = left + (cellWidth - labelWidth) / 2
            bytes += Array("BT /F2 \(Self.number(Self.labelSize)) Tf \(Self.number(labelX)) \(Self.number(y - 14)) Td (".utf8)
            bytes += label + Array(") Tj ET\n".utf8)
        }
        return bytes
    }

    /// The symbol with its quiet zone as a 1-bit grey image (0 is black), rows padded to bytes.
    static func inlineImage(_ code: QRCode) -> [UInt8] {
        let side = code.size + 2 * QRCode.quietZone
        var bytes = Array("BI /W \(side) /H \(side) /BPC 1 /CS /G /F /AHx ID\n".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        for row in 0..<side {
            var byte: UInt8 = 0
            var bits = 0
            for column in 0..<side {
                let moduleRow = row - QRCode.quietZone
                let moduleColumn = column - QRCode.quietZone
                let dark = (0..<code.size).contains(moduleRow) && (0..<code.size).contains(moduleColumn)
                    && code.isDark(row: moduleRow, column: moduleColumn)
                byte = byte << 1 | (dark ? 0 : 1)
                bits += 1
                if bits == 8 {
                    bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                    byte = 0
                    bits = 0
                }
            }
            if bits > 0 {
                // The row's last byte, padded with light bits.
                byte = byte << (8 - bits) | (0xFF >> bits)
                bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
            bytes.append(0x0A)
        }
        bytes += Array(">\nEI\n".utf8)
        return bytes
    }

    /// Text for a PDF string literal in WinAnsiEncoding: Latin-1 letters kept, anything else
    /// (and control characters) shown as `?`, and the delimiters escaped.
    static func pdfString(_ text: String) -> [UInt8] { PDFText.string(text) }

    static func number(_ value: Double) -> String { PDFText.number(value) }
}
