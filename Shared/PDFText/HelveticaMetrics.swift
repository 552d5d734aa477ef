import Foundation

/// Glyph widths of the standard fonts Helvetica and Helvetica-Bold (their Adobe font metrics, in
/// thousandths of the font size), for wrapping text. Letters of Latin-1 with a mark are as wide
/// as the letter without it; a character the standard fonts cannot draw is measured as `?`.
enum HelveticaMetrics {
    /// Printable ASCII, from the space (32) to the tilde (126).
    static let regular: [UInt16] = [
        278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
        1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
        667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
        333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
        556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
    ]
    static let bold: [UInt16] = [
        278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
        975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
        667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
        333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
        611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
    ]

    /// The width of `scalar` in thousandths of the font size.
    static func width(_ scalar: Unicode.Scalar, bold: Bool) -> Int {
        let table = bold ? Self.bold : Self.regular
        let value = scalar.value
        if (32...126).contains(value) { return Int(table[Int(value) - 32]) }
        guard (0xA0...0xFF).contains(value) else { return Int(table[Int(UInt8(ascii: "?")) - 32]) }
        switch value {
        case 0xC6: return 1000  // Æ
        case 0xE6: return bold ? 889 : 889  // æ
        case 0xDF: return 611  // ß
        case 0xD7: return 584  // ×
        case 0xF7: return 584  // ÷
        default:
            // A letter with a mark: its letter's width. Symbols: as wide as the widest letter
            // of their kind, so a line never runs past its margin.
            if let base = String(Character(scalar)).decomposedStringWithCanonicalMapping.unicodeScalars.first, base.isASCII {
                return Int(table[Int(base.value) - 32])
            }
            return 1000
        }
    }
}
