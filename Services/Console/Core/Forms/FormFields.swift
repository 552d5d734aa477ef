import Foundation

/// A submitted HTML form (`application/x-www-form-urlencoded`, or `multipart/form-data` when it
/// carries a file): names and values in the order the browser sent them; a name may repeat (a
/// group of checkboxes).
package struct FormFields: Sendable, Equatable {
    package private(set) var pairs: [(name: String, value: String)] {
        didSet { index = Self.index(pairs) }
    }
    /// Where each name first appears: a page of an activity reads a thousand names.
    private var index: [String: Int]

    /// A file kept as bytes (not text): see `binaryFileField`.
    package struct Upload: Sendable, Equatable {
        package var filename: String
        package var bytes: [UInt8]
    }

    /// The one file field whose content is kept as bytes: an image or a PDF for the study.
    package static let binaryFileField = "upload"

    /// The files of `binaryFileField` in a `multipart/form-data` body, by field name.
    package var uploads: [String: Upload] = [:]

    /// The study's time zone, on whose clock the page's dates the apps read with an offset are
    /// typed (`FormField.Kind.appDateTime`); set from the document the form is applied to.
    package var timeZone: TimeZone?

    /// More fields than any console page has; a body past it is refused before it is looked at.
    package static let maxFields = 10_000

    package init(_ pairs: [(name: String, value: String)] = []) {
        self.pairs = pairs
        index = Self.index(pairs)
    }

    static func index(_ pairs: [(name: String, value: String)]) -> [String: Int] {
        var index: [String: Int] = [:]
        index.reserveCapacity(pairs.count)
        for (position, pair) in pairs.enumerated() where index[pair.name] == nil { index[pair.name] = position }
        return index
    }

    package static func == (lhs: FormFields, rhs: FormFields) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
    }

    package enum ParseError: Error, Equatable {
        case tooManyFields
        case notText
        /// A multipart body that does not follow RFC 7578 (what is wrong).
        case malformed(String)
        /// The file chosen for this field is not UTF-8 text.
        case fileNotText(String)
    }

    /// Parses a urlencoded body: `+` is a space, then percent escapes (malformed ones are kept).
    package init(urlencoded body: some Collection<UInt8>) throws(ParseError) {
        guard let text = String(validating: Array(body), as: UTF8.self) else { throw .notText }
        var pairs: [(name: String, value: String)] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            guard pairs.count < Self.maxFields else { throw .tooManyFields }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            pairs.append((Self.decode(parts[0]), parts.count > 1 ? Self.decode(parts[1]) : ""))
        }
        self.pairs = pairs
        index = Self.index(pairs)
    }

    static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// The first value of `name`.
    package subscript(name: String) -> String? {
        index[name].map { pairs[$0].value }
    }

    /// Every value of `name`, in order.
    package func all(_ name: String) -> [String] {
        pairs.filter { $0.name == name }.map(\.value)
    }

    package mutating func append(_ name: String, _ value: String) {
        pairs.append((name, value))
    }

    /// `name` with this one value, wherever it was.
    package mutating func set(_ name: String, _ value: String) {
        pairs.removeAll { $0.name == name }
        pairs.append((name, value))
    }
}
