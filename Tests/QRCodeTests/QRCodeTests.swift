import Foundation
import QRCode
import Testing
import TestSupport

/// QR codes from libqrencode, and the printable sheet: what a phone or a scanner reads back from
/// it is checked with zbarimg (Debian's zbar-tools) on pages rendered by pdftoppm (poppler-utils).
@Suite struct QRCodeTests {
    @Test func aShortTokenIsAVersionOneSymbolWithItsFinderPatterns() throws {
        let code = try QRCode(encoding: "KXQZTRWB")
        #expect(code.size == 21)
        #expect(code.modules.count == 21 * 21)
        // Each finder pattern: a dark 7x7 ring, a light ring inside it, a dark 3x3 centre.
        for (top, left) in [(0, 0), (0, 14), (14, 0)] {
            for offset in 0..<7 {
                #expect(code.isDark(row: top, column: left + offset))
                #expect(code.isDark(row: top + 6, column: left + offset))
                #expect(code.isDark(row: top + offset, column: left))
            }
            #expect(!code.isDark(row: top + 1, column: left + 1))
            #expect(code.isDark(row: top + 3, column: left + 3))
        }
        // The same text gives the same symbol; another text does not.
        #expect(try QRCode(encoding: "KXQZTRWB") == code)
        #expect(try QRCode(encoding: "KXQZTRWC") != code)
    }

    @Test func textTheCodeCannotHoldIsRefused() {
        #expect(throws: QRCode.EncodingError.self) { try QRCode(encoding: "") }
        #expect(throws: QRCode.EncodingError.self) { try QRCode(encoding: String(repeating: "x", count: QRCode.maxBytes + 1)) }
        #expect(throws: QRCode.EncodingError.self) { try QRCode(encoding: "a\u{0}b") }
    }

    @Test(.needsPrograms("pdftotext", "pdftoppm", "zbarimg")) func everyCodeOnTheSheetReadsBackAsItsToken() throws {
        let tokens = (0..<45).map { index in String(format: "TOKEN%03d", index) }
        let sheet = QRSheet(
            heading: "Study (SLEEPWELL) \\ tokens: Zürich 東京", note: "Scan one code in the app (or type its text).",
            entries: try tokens.map { QRSheet.Entry(code: try QRCode(encoding: $0), label: $0) })
        #expect(sheet.pageCount == 3)
        let pdf = Data(sheet.pdf())
        let text = try ExternalTool.run("pdftotext", ["-layout", "-", "-"], input: pdf)
        #expect(text.contains("Study (SLEEPWELL) \\ tokens: Zürich ??"))
        #expect(text.contains("page 3 of 3"))
        #expect(text.components(separatedBy: "Scan one code in the app (or type its text).").count - 1 == 3, "the note on every page")
        for token in tokens { #expect(text.contains(token)) }

        let read = try ExternalTool.qrCodes(inPDF: pdf)
        #expect(read.count == tokens.count)
        #expect(read.sorted() == tokens.sorted())
    }

    @Test func theSVGDrawsTheSameModules() throws {
        let code = try QRCode(encoding: "https://studystack.example/s/SLEEPWELL")
        let svg = code.svg(moduleSize: 2)
        let side = (code.size + 8) * 2
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\""))
        // Each run of dark modules is one subpath: count them against the matrix.
        var runs = 0
        for row in 0..<code.size {
            for column in 0..<code.size where code.isDark(row: row, column: column) && (column == 0 || !code.isDark(row: row, column: column - 1)) {
                runs += 1
            }
        }
        #expect(svg.components(separatedBy: "M").count - 1 == runs)
    }
}

extension QRCodeTests {
    /// A stream written past the pages it was started with refuses the page (it used to trap,
    /// taking the response service down with the download).
    @Test func aStreamRefusesMorePagesThanItWasStartedWith() throws {
        var stream = QRSheet.Stream(heading: "h", entryCount: 1)
        _ = stream.start()
        let entry = QRSheet.Entry(code: try QRCode(encoding: "A"), label: "A")
        #expect(!(try stream.page([entry][...])).isEmpty)
        #expect(throws: QRSheet.TooManyPages.self) { try stream.page([entry][...]) }
        #expect(!stream.finish().isEmpty)
    }
}
