import Foundation

/// A small PDF, as a signed consent document the apps upload.
struct ConsentPDF: Sendable {
    static func pdf(_ text: String) -> Data {
        Data("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% \(text)\n%%EOF\n".utf8)
    }
}
