/// An RFC 3986 URI reference split into its five parts, and the standard's algorithm for
/// resolving one against a base (section 5.2). Schemas name each other by `$id` and `$ref`, and
/// those are compared as text after resolution, so the resolution has to be the standard's, byte
/// for byte; Foundation's `URL` normalises some forms (and rejects others, such as `urn:` names
/// with odd characters) in ways the test suite notices.
struct URIReference: Equatable, Sendable {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    /// Splits `text` as RFC 3986 appendix B's regular expression does, scanning by Unicode scalar.
    init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.unicodeScalars.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.unicodeScalars.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        // A scheme is letters, digits, "+", "-", "." before the first ":", starting with a letter,
        // and with no "/" before the colon.
        if let colon = rest.unicodeScalars.firstIndex(of: ":") {
            let candidate = rest[..<colon]
            let scalars = candidate.unicodeScalars
            if let first = scalars.first, ("a"..."z").contains(first) || ("A"..."Z").contains(first),
                scalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "." }) {
                scheme = String(candidate)
                rest = rest[rest.index(after: colon)...]
            }
        }
        if rest.unicodeScalars.starts(with: "//".unicodeScalars) {
            let afterSlashes = rest.unicodeScalars.index(rest.startIndex, offsetBy: 2)
            let authorityPart = rest[afterSlashes...]
            if let slash = authorityPart.unicodeScalars.firstIndex(of: "/") {
                authority = String(authorityPart[..<slash])
                rest = authorityPart[slash...]
            } else {
                authority = String(authorityPart)
                rest = ""
            }
        }
        path = String(rest)
    }

    init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// RFC 3986 section 5.3: the parts put back together.
    var text: String {
        var out = ""
        if let scheme { out += scheme + ":" }
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }

    /// The same reference without its fragment: the name of the document it points into.
    var withoutFragment: URIReference {
        var copy = self
        copy.fragment = nil
        return copy
    }

    /// RFC 3986 section 5.2.2: `self` resolved against `base` (strict: a reference's own scheme
    /// always wins).
    func resolved(against base: URIReference) -> URIReference {
        if let scheme {
            return URIReference(scheme: scheme, authority: authority, path: Self.removingDotSegments(path), query: query, fragment: fragment)
        }
        if authority != nil {
            return URIReference(scheme: base.scheme, authority: authority, path: Self.removingDotSegments(path), query: query, fragment: fragment)
        }
        if path.isEmpty {
            return URIReference(scheme: base.scheme, authority: base.authority, path: base.path, query: query ?? base.query, fragment: fragment)
        }
        let merged: String
        if path.unicodeScalars.first == "/" {
            merged = path
        } else if base.authority != nil, base.path.isEmpty {
            merged = "/" + path
        } else if let lastSlash = base.path.unicodeScalars.lastIndex(of: "/") {
            merged = String(base.path[...lastSlash]) + path
        } else {
            merged = path
        }
        return URIReference(scheme: base.scheme, authority: base.authority, path: Self.removingDotSegments(merged), query: query, fragment: fragment)
    }

    /// RFC 3986 section 5.2.4.
    static func removingDotSegments(_ path: String) -> String {
        guard path.unicodeScalars.contains(".") else { return path }
        let absolute = path.unicodeScalars.first == "/"
        var output: [Substring] = []
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        // "a/b/" splits to [..., ""]: the empty last segment keeps the trailing slash.
        for (index, segment) in segments.enumerated() {
            let isLast = index == segments.count - 1
            if index == 0, absolute { continue }
            switch segment {
            case ".":
                if isLast { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if isLast { output.append("") }
            default:
                output.append(segment)
            }
        }
        return (absolute ? "/" : "") + output.joined(separator: "/")
    }
}
