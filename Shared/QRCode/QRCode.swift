import CQRencode

/// A QR Code symbol, encoded by libqrencode: a square of dark and light modules.
public struct QRCode: Sendable, Equatable {
    /// How much of the symbol may be damaged and still read (about 7, 15, 25 and 30 percent).
    public enum Correction: Sendable {
        case low, medium, quartile, high

        var level: QRecLevel {
            switch self {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        }
    }

    public struct EncodingError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Modules per side.
    public let size: Int
    /// Row by row from the top left: true for a dark module.
    public let modules: [Bool]

    /// The light border readers need around a symbol, in modules (the standard's minimum).
    public static let quietZone = 4

    /// The longest text encoded: far below the format's limit (about 2,300 bytes at `medium`),
    /// and far above any token or link the services put in a code.
    public static let maxBytes = 1_024

    /// Encodes `text` (UTF-8, in the most compact modes libqrencode finds) at the smallest
    /// version that holds it.
    public init(encoding text: String, correction: Correction = .medium) throws(EncodingError) {
        guard !text.isEmpty, text.utf8.count <= Self.maxBytes, !text.utf8.contains(0) else {
            throw EncodingError(description: "a QR code holds 1 to \(Self.maxBytes) bytes of text without NUL")
        }
        guard let symbol = QRcode_encodeString(text, 0, correction.level, QR_MODE_8, 1) else {
            throw EncodingError(description: "libqrencode could not encode the text")
        }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits say what the module is part of.
        let data = UnsafeBufferPointer(start: symbol.pointee.data, count: width * width)
        size = width
        modules = data.map { $0 & 1 == 1 }
    }

    public func isDark(row: Int, column: Int) -> Bool {
        modules[row * size + column]
    }
}
