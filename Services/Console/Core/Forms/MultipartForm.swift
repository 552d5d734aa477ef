import Foundation
import ServiceKit

// A form with a file (`multipart/form-data`, RFC 7578): the study document, an activity's design
// and the push credentials are files an admin has on disk. Those are text (JSON, a PEM key), so a
// file part becomes a field like any other, its value the file's text. The one exception is the
// field named `upload` (`binaryFileField`): an image or a PDF for the study, kept as bytes.

extension FormFields {
    /// The boundary of a `multipart/form-data` content type, if it is one.
    package static func multipartBoundary(contentType: String) -> String? {
        MultipartFormData.boundary(contentType: contentType)
    }

    /// Parses a `multipart/form-data` body (`MultipartFormData`). A file part (one with a
    /// `filename`) gives its name the file's text, and `<name>#filename` the file's name.
    package init(multipart body: some Collection<UInt8>, boundary: String) throws(ParseError) {
        let parts: [MultipartFormData.Part]
        do {
            parts = try MultipartFormData.parts(body, boundary: boundary, maxParts: Self.maxFields)
        } catch {
            switch error {
            case .malformed(let reason): throw .malformed(reason)
            case .notText: throw .notText
            case .tooManyParts: throw .tooManyFields
            }
        }
        var pairs: [(name: String, value: String)] = []
        var uploads: [String: Upload] = [:]
        for part in parts {
            if part.name == Self.binaryFileField, let filename = part.filename {
                uploads[part.name] = Upload(filename: filename, bytes: Array(part.content))
                pairs.append((part.name + "#filename", filename))
                continue
            }
            guard let value = String(validating: part.content, as: UTF8.self) else {
                throw part.filename == nil ? .notText : .fileNotText(part.name)
            }
            pairs.append((part.name, value))
            if let filename = part.filename { pairs.append((part.name + "#filename", filename)) }
        }
        self.init(pairs)
        self.uploads = uploads
    }

    /// The text of a file field when a file was chosen, else what was pasted in `pasted`.
    package func text(file: String, orPasted pasted: String) -> String {
        if let text = self[file], !text.isEmpty { return text }
        return self[pasted] ?? ""
    }
}
