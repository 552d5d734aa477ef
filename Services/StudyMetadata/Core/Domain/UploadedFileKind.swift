import Foundation

/// What a study may upload for the apps to show: images (thumbnail, overview pages, image
/// choices) and PDFs (resources). The type is read from the content's first bytes, never taken
/// from the name or the declared type, and each kind has its own size limit.
package enum UploadedFileKind: String, Sendable, CaseIterable {
    case png = "image/png"
    case jpeg = "image/jpeg"
    case gif = "image/gif"
    case pdf = "application/pdf"

    /// Images are shown in lists and pages on a phone; a resource PDF may be a long document.
    package var maxBytes: Int { self == .pdf ? 5 * 1024 * 1024 : 2 * 1024 * 1024 }

    /// The most files one study keeps (they are never deleted: a frozen version may name one).
    package static let maxPerStudy = 200

    /// The kind the content is, by its signature; nil for anything else.
    package static func of(_ content: some Collection<UInt8>) -> UploadedFileKind? {
        func starts(_ signature: [UInt8]) -> Bool { content.starts(with: signature) }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("%PDF-".utf8)) { return .pdf }
        return nil
    }

    /// A file name as shown and served: its last path component, printable, at most 100
    /// characters; "file" when nothing is left.
    package static func displayName(_ name: String) -> String {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        let printable = String(String.UnicodeScalarView(last.unicodeScalars.filter {
            !$0.properties.generalCategory.isControlOrFormat && $0 != "\"" && $0 != ";"
        }))
        let trimmed = printable.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty ? "file" : String(trimmed.prefix(100))
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isControlOrFormat: Bool {
        switch self {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: true
        default: false
        }
    }
}
