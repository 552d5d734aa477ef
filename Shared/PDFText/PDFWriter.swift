/// Writes a PDF file's objects, remembering where each starts, and the cross-reference table
/// that locates them. It hands back each piece's bytes, so a file can be streamed.
public struct PDFWriter: Sendable {
    private var offset = 0
    private var offsets: [Int: Int] = [:]

    public init() {}

    private mutating func emit(_ bytes: [UInt8]) -> [UInt8] {
        offset += bytes.count
        return bytes
    }

    public mutating func header() -> [UInt8] {
        // The second line's high bytes tell transfer programs the file is binary.
        emit(Array("%PDF-1.4\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A])
    }

    public mutating func object(_ id: Int, _ body: String) -> [UInt8] {
        offsets[id] = offset
        return emit(Array("\(id) 0 obj\n\(body)\nendobj\n".utf8))
    }

    public mutating func stream(_ id: Int, _ content: [UInt8]) -> [UInt8] {
        offsets[id] = offset
        return emit(Array("\(id) 0 obj\n<< /Length \(content.count) >>\nstream\n".utf8) + content + Array("\nendstream\nendobj\n".utf8))
    }

    public mutating func finish(root: Int, info: Int? = nil) -> [UInt8] {
        let count = (offsets.keys.max() ?? 0) + 1
        let xref = offset
        var table = "xref\n0 \(count)\n0000000000 65535 f \n"
        for id in 1..<count {
            let at = String(offsets[id] ?? 0)
            table += String(repeating: "0", count: 10 - at.count) + at + (offsets[id] == nil ? " 65535 f \n" : " 00000 n \n")
        }
        let infoEntry = info.map { " /Info \($0) 0 R" } ?? ""
        table += "trailer\n<< /Size \(count) /Root \(root) 0 R\(infoEntry) >>\nstartxref\n\(xref)\n%%EOF\n"
        return emit(Array(table.utf8))
    }
}

/// Text and numbers as a PDF's content streams write them.
public enum PDFText {
    /// Text for a PDF string literal in WinAnsiEncoding: Latin-1 letters kept, anything else
    /// (and control characters) shown as `?`, and the delimiters escaped.
    public static func string(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x28, 0x29, 0x5C: bytes += [0x5C, UInt8(scalar.value)]
            case 0x20...0x7E, 0xA0...0xFF: bytes.append(UInt8(scalar.value))
            default: bytes.append(0x3F)
            }
        }
        return bytes
    }

    /// Whether the standard fonts can draw `scalar` (WinAnsiEncoding's Latin-1 part).
    public static func isDrawable(_ scalar: Unicode.Scalar) -> Bool {
        (0x20...0x7E).contains(scalar.value) || (0xA0...0xFF).contains(scalar.value)
    }

    /// A number with at most two decimals, as content streams take it.
    public static func number(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        let whole = Int(hundredths) / 100
        let fraction = abs(Int(hundredths) % 100)
        return fraction == 0 ? "\(whole)" : "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
