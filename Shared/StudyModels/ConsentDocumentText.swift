/// The document a participant signs, as the apps are sent it (`eligibilityConsent`'s
/// `review.reviewHTML`, `consentDocument`'s `content`) and as the console previews it.
extension Consent {
    /// The study's own HTML, or the screens' sections in order (each title and its "learn more"
    /// text, escaped, since they are plain text).
    public func signedDocumentHTML(language: String?) -> String {
        if review.type == .html, let html = review.html { return html.text(for: language) }
        return visualScreens.map { screen in
            let body = (screen.description ?? screen.text).text(for: language)
            return "<h2>\(HTMLText.escape(screen.title.text(for: language)))</h2><p>\(HTMLText.escape(body))</p>"
        }.joined()
    }
}

extension HTMLText {
    /// A block of a document's text: what a page lays out.
    public struct Block: Sendable, Equatable {
        public enum Kind: Sendable, Equatable {
            case heading
            case paragraph
            case listItem
        }

        public var kind: Kind
        public var text: String

        public init(_ kind: Kind, _ text: String) {
            self.kind = kind
            self.text = text
        }
    }

    /// The text of `html` as blocks: headings, paragraphs and list items, white space collapsed,
    /// the usual entities read, scripts and styles left out, every other tag's text kept. At most
    /// `maxBlocks` blocks and `maxScalars` scalars are read (a document past them is cut there);
    /// no tag is trusted to be well formed.
    public static func blocks(_ html: String, maxBlocks: Int = 10_000, maxScalars: Int = 2_000_000) -> [Block] {
        var blocks: [Block] = []
        var text = String.UnicodeScalarView()
        var kind = Block.Kind.paragraph
        var skipping: String?
        var pendingSpace = false
        func flush() {
            if !text.isEmpty, blocks.count < maxBlocks { blocks.append(Block(kind, String(text))) }
            text = String.UnicodeScalarView()
            pendingSpace = false
            kind = .paragraph
        }
        func append(_ scalar: Unicode.Scalar) {
            if scalar.properties.isWhitespace {
                pendingSpace = !text.isEmpty
                return
            }
            if pendingSpace { text.append(" ") }
            pendingSpace = false
            text.append(scalar)
        }
        let scalars = Array(html.unicodeScalars.prefix(maxScalars))
        var index = 0
        while index < scalars.count, blocks.count < maxBlocks {
            let scalar = scalars[index]
            if scalar == "<" {
                guard let close = scalars[index...].firstIndex(of: ">") else { break }
                let inside = String(String.UnicodeScalarView(scalars[(index + 1)..<close])).lowercased()
                index = close + 1
                let closing = inside.hasPrefix("/")
                let name = String(inside.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber })
                if let skipped = skipping {
                    if closing, name == skipped { skipping = nil }
                    continue
                }
                switch name {
                case "script", "style", "head", "title": if !closing { skipping = name }
                case "h1", "h2", "h3", "h4", "h5", "h6":
                    flush()
                    if !closing { kind = .heading }
                case "li":
                    flush()
                    if !closing { kind = .listItem }
                case "p", "div", "br", "ul", "ol", "tr", "table", "section", "blockquote", "hr": flush()
                default: break
                }
                continue
            }
            if skipping != nil {
                index += 1
                continue
            }
            if scalar == "&", let semicolon = scalars[index...].prefix(12).firstIndex(of: ";") {
                let name = String(String.UnicodeScalarView(scalars[(index + 1)..<semicolon]))
                if let decoded = entity(name) {
                    append(decoded)
                    index = semicolon + 1
                    continue
                }
            }
            append(scalar)
            index += 1
        }
        flush()
        return blocks
    }

    /// The scalar an entity's name (between `&` and `;`) stands for; nil when it is not one read.
    static func entity(_ name: String) -> Unicode.Scalar? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case "nbsp": return " "
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.hasPrefix("x") || digits.hasPrefix("X") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            // A control character or no scalar at all is not text.
            return value.flatMap(Unicode.Scalar.init).flatMap { $0.properties.generalCategory == .control ? nil : $0 }
        }
    }
}
