import Foundation

/// The draft-07 `format`s this validator can assert, when asked to (`assertsFormats`). Every
/// check reads Unicode scalars or bytes, never `Character`s, and bounds what it counts.
/// `idn-hostname` is not asserted, nor are A-labels (`xn--…`) decoded: IDNA2008's tables are not
/// reachable here without a library, and a half check would refuse real names. `idn-email`
/// allows characters beyond ASCII in both parts and checks the rest as `email` does.
public enum StringFormat: String, Sendable, CaseIterable {
    case dateTime = "date-time"
    case date
    case time
    case email
    case idnEmail = "idn-email"
    case hostname
    case ipv4
    case ipv6
    case uri
    case uriReference = "uri-reference"
    case iri
    case iriReference = "iri-reference"
    case uriTemplate = "uri-template"
    case jsonPointer = "json-pointer"
    case relativeJSONPointer = "relative-json-pointer"
    case regex

    var description: String { "a valid \(rawValue)" }

    func admits(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars.prefix(4097))
        guard scalars.count <= 4096 else { return false }
        switch self {
        case .dateTime: return Self.dateTime(scalars)
        case .date: return Self.date(scalars[...])
        case .time: return Self.time(scalars[...], date: nil)
        case .email: return Self.email(scalars, international: false)
        case .idnEmail: return Self.email(scalars, international: true)
        case .hostname: return Self.hostname(scalars[...])
        case .ipv4: return Self.ipv4(scalars[...])
        case .ipv6: return Self.ipv6(scalars[...])
        case .uri: return Self.uri(scalars, requireScheme: true, international: false)
        case .uriReference: return Self.uri(scalars, requireScheme: false, international: false)
        case .iri: return Self.uri(scalars, requireScheme: true, international: true)
        case .iriReference: return Self.uri(scalars, requireScheme: false, international: true)
        case .uriTemplate: return Self.uriTemplate(scalars)
        case .jsonPointer: return Self.jsonPointer(scalars[...])
        case .relativeJSONPointer: return Self.relativeJSONPointer(scalars[...])
        case .regex: return (try? SchemaPattern(text)) != nil
        }
    }

    private typealias Scalars = ArraySlice<Unicode.Scalar>

    /// A character beyond ASCII that may stand in an internationalised name: not white space, not
    /// a control character.
    private static func isWideNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x80 && !scalar.properties.isWhitespace && scalar.properties.generalCategory != .control
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
    private static func isHex(_ scalar: Unicode.Scalar) -> Bool { scalar.isASCII && scalar.properties.isASCIIHexDigit }
    private static func isAlpha(_ scalar: Unicode.Scalar) -> Bool { ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) }

    /// Exactly `count` ASCII digits from `start`, as a number.
    private static func digits(_ scalars: Scalars, _ start: Int, _ count: Int) -> Int? {
        guard start >= scalars.startIndex, start + count <= scalars.endIndex else { return nil }
        var value = 0
        for scalar in scalars[start..<start + count] {
            guard isDigit(scalar) else { return nil }
            value = value * 10 + Int(scalar.value - 48)
        }
        return value
    }

    // MARK: Dates and times (RFC 3339 section 5.6)

    private static func dateTime(_ scalars: [Unicode.Scalar]) -> Bool {
        guard let separator = scalars.firstIndex(where: { $0 == "T" || $0 == "t" }), separator == 10 else { return false }
        let datePart = scalars[..<separator]
        guard date(datePart) else { return false }
        return time(scalars[(separator + 1)...], date: datePart)
    }

    private static func date(_ scalars: Scalars) -> Bool {
        let start = scalars.startIndex
        guard scalars.count == 10, scalars[start + 4] == "-", scalars[start + 7] == "-",
            let year = digits(scalars, start, 4), let month = digits(scalars, start + 5, 2), let day = digits(scalars, start + 8, 2),
            (1...12).contains(month), day >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        return day <= lengths[month - 1]
    }

    /// A full-time: `hh:mm:ss[.frac](Z|±hh:mm)`. A leap second must fall on 23:59:60 UTC.
    private static func time(_ scalars: Scalars, date: Scalars?) -> Bool {
        let start = scalars.startIndex
        guard scalars.count >= 9, scalars[start + 2] == ":", scalars[start + 5] == ":",
            let hour = digits(scalars, start, 2), let minute = digits(scalars, start + 3, 2), let second = digits(scalars, start + 6, 2),
            hour <= 23, minute <= 59, second <= 60 else { return false }
        var index = start + 8
        if scalars[index] == "." {
            index += 1
            let fractionStart = index
            while index < scalars.endIndex, isDigit(scalars[index]) { index += 1 }
            guard index > fractionStart else { return false }
        }
        guard index < scalars.endIndex else { return false }
        var offsetMinutes = 0
        switch scalars[index] {
        case "Z", "z":
            guard index + 1 == scalars.endIndex else { return false }
        case "+", "-":
            guard scalars.endIndex - index == 6, scalars[index + 3] == ":",
                let offsetHour = digits(scalars, index + 1, 2), let offsetMinute = digits(scalars, index + 4, 2),
                offsetHour <= 23, offsetMinute <= 59 else { return false }
            offsetMinutes = (offsetHour * 60 + offsetMinute) * (scalars[index] == "-" ? -1 : 1)
        default:
            return false
        }
        if second == 60 {
            let utc = ((hour * 60 + minute - offsetMinutes) % 1440 + 1440) % 1440
            return utc == 23 * 60 + 59
        }
        return true
    }

    // MARK: Names and addresses

    private static func hostname(_ scalars: Scalars) -> Bool {
        guard !scalars.isEmpty, scalars.count <= 253 else { return false }
        let labels = scalars.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            guard (1...63).contains(label.count), label.first != "-", label.last != "-" else { return false }
            guard label.allSatisfy({ isAlpha($0) || isDigit($0) || $0 == "-" }) else { return false }
            // "--" in the third and fourth places is reserved for A-labels ("xn--").
            if label.count >= 4, label[label.startIndex + 2] == "-", label[label.startIndex + 3] == "-" {
                return String(String.UnicodeScalarView(label.prefix(2))).lowercased() == "xn" && label.count > 4
            }
            return true
        }
    }

    private static func ipv4(_ scalars: Scalars) -> Bool {
        let parts = scalars.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            guard (1...3).contains(part.count), part.allSatisfy(isDigit), part.count == 1 || part.first != "0",
                let value = Int(String(String.UnicodeScalarView(part))) else { return false }
            return value <= 255
        }
    }

    private static func ipv6(_ scalars: Scalars) -> Bool {
        guard scalars.count >= 2, scalars.count <= 45 else { return false }
        var text = scalars
        var groupsAvailable = 8
        // A dotted IPv4 address may end it, counting for two groups.
        if let lastColon = text.lastIndex(of: ":"), text[(lastColon + 1)...].contains(".") {
            guard ipv4(text[(lastColon + 1)...]) else { return false }
            // Keep the colon when it is the second of a "::", drop it when it only separates.
            let keepsColon = lastColon > text.startIndex && text[lastColon - 1] == ":"
            text = keepsColon ? text[...lastColon] : text[..<lastColon]
            groupsAvailable = 6
        }
        let halves = split(text, on: "::")
        guard halves.count <= 2 else { return false }
        func groups(_ part: Scalars) -> Int? {
            if part.isEmpty { return 0 }
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            guard pieces.allSatisfy({ (1...4).contains($0.count) && $0.allSatisfy(isHex) }) else { return nil }
            return pieces.count
        }
        if halves.count == 2 {
            guard let first = groups(halves[0]), let second = groups(halves[1]) else { return false }
            return first + second < groupsAvailable
        }
        return groups(text) == groupsAvailable
    }

    private static func split(_ scalars: Scalars, on separator: String) -> [Scalars] {
        let pattern = Array(separator.unicodeScalars)
        var parts: [Scalars] = []
        var start = scalars.startIndex
        var index = scalars.startIndex
        while index + pattern.count <= scalars.endIndex {
            if Array(scalars[index..<index + pattern.count]) == pattern {
                parts.append(scalars[start..<index])
                index += pattern.count
                start = index
            } else {
                index += 1
            }
        }
        parts.append(scalars[start...])
        return parts
    }

    private static func email(_ scalars: [Unicode.Scalar], international: Bool) -> Bool {
        guard let at = scalars.lastIndex(of: "@") else { return false }
        let local = scalars[..<at]
        let domain = scalars[(at + 1)...]
        // RFC 6531 lets a local part hold any character beyond ASCII (UTF8-non-ascii).
        guard !local.isEmpty, local.count <= 64 else { return false }
        if local.first == "\"" {
            guard local.count >= 2, local.last == "\"" else { return false }
        } else {
            let atext = Set("!#$%&'*+-/=?^_`{|}~".unicodeScalars)
            guard local.first != ".", local.last != ".", split(local, on: "..").count == 1,
                local.allSatisfy({ isAlpha($0) || isDigit($0) || atext.contains($0) || $0 == "." || (international && $0.value >= 0x80) })
            else { return false }
        }
        if domain.first == "[", domain.last == "]" {
            let literal = domain.dropFirst().dropLast()
            if literal.starts(with: "IPv6:".unicodeScalars) { return ipv6(literal.dropFirst(5)) }
            return ipv4(literal)
        }
        guard international else { return hostname(domain) }
        // An internationalised domain: each label checked as a host name's, with letters beyond
        // ASCII allowed (IDNA's own tables are not applied).
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        return !labels.isEmpty && labels.allSatisfy { label in
            (1...63).contains(label.count) && label.first != "-" && label.last != "-"
                && label.allSatisfy { isAlpha($0) || isDigit($0) || $0 == "-" || isWideNameCharacter($0) }
        }
    }

    // MARK: URIs, templates and pointers

    /// RFC 3986 (and, with `international`, RFC 3987's wider set of characters): the characters
    /// each part allows, percent-encodings well formed, a scheme that starts with a letter where
    /// there is one, and an authority of `[userinfo@]host[:port]` with brackets only around an IP
    /// literal.
    private static func uri(_ scalars: [Unicode.Scalar], requireScheme: Bool, international: Bool) -> Bool {
        let reference = URIReference(String(String.UnicodeScalarView(scalars)))
        if let scheme = reference.scheme {
            guard !scheme.isEmpty else { return false }
        } else if requireScheme {
            return false
        } else if let colon = scalars.firstIndex(of: ":"), !scalars[..<colon].contains("/") {
            // A relative reference's first segment may not hold a colon (it would read as a scheme).
            return false
        }
        let pathCharacters = Set(":@/!$&'()*+,;=".unicodeScalars)
        let queryCharacters = pathCharacters.union(["?"])
        if let authority = reference.authority, !self.authority(Array(authority.unicodeScalars), international: international) { return false }
        return uriPart(Array(reference.path.unicodeScalars), allowing: pathCharacters, international: international)
            && uriPart(Array((reference.query ?? "").unicodeScalars), allowing: queryCharacters, international: international)
            && uriPart(Array((reference.fragment ?? "").unicodeScalars), allowing: queryCharacters, international: international)
    }

    private static func authority(_ scalars: [Unicode.Scalar], international: Bool) -> Bool {
        let subDelimiters = Set("!$&'()*+,;=".unicodeScalars)
        var hostAndPort = scalars[...]
        if let at = scalars.firstIndex(of: "@") {
            guard uriPart(Array(scalars[..<at]), allowing: subDelimiters.union([":"]), international: international) else { return false }
            hostAndPort = scalars[(at + 1)...]
        }
        var portStart: Int?
        if hostAndPort.first == "[" {
            guard let close = hostAndPort.firstIndex(of: "]") else { return false }
            let literal = hostAndPort[(hostAndPort.startIndex + 1)..<close]
            let future = literal.first == "v" || literal.first == "V"
            guard future ? literal.count > 2 && literal.contains(".") : ipv6(literal) else { return false }
            if close + 1 < hostAndPort.endIndex {
                guard hostAndPort[close + 1] == ":" else { return false }
                portStart = close + 2
            }
        } else {
            let colon = hostAndPort.firstIndex(of: ":")
            guard uriPart(Array(hostAndPort[..<(colon ?? hostAndPort.endIndex)]), allowing: subDelimiters, international: international) else { return false }
            portStart = colon.map { $0 + 1 }
        }
        guard let portStart else { return true }
        return hostAndPort[portStart...].allSatisfy(isDigit)
    }

    /// Unreserved characters, percent-encodings and `allowed` (and, for an IRI, characters
    /// outside ASCII other than the private-use ranges and noncharacters).
    private static func uriPart(_ scalars: [Unicode.Scalar], allowing allowed: Set<Unicode.Scalar>, international: Bool) -> Bool {
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "%" {
                guard index + 2 < scalars.count, isHex(scalars[index + 1]), isHex(scalars[index + 2]) else { return false }
                index += 3
                continue
            }
            let unreserved = isAlpha(scalar) || isDigit(scalar) || scalar == "-" || scalar == "." || scalar == "_" || scalar == "~"
            let wide = international && scalar.value >= 0xA0 && !(0xE000...0xF8FF).contains(scalar.value) && !(0xFDD0...0xFDEF).contains(scalar.value)
            guard unreserved || wide || allowed.contains(scalar) else { return false }
            index += 1
        }
        return true
    }

    /// RFC 6570: literals, and expressions of an optional operator and a list of variable names,
    /// each with an optional prefix length (1 to 9999) or explode marker.
    private static func uriTemplate(_ scalars: [Unicode.Scalar]) -> Bool {
        let operators = Set("+#./;?&=,!@|".unicodeScalars)
        // (The apostrophe is a literal: RFC 6570's errata, as the official test suite reads it.)
        let excludedLiterals = Set("\"<>\\^`{|} ".unicodeScalars)
        var index = 0
        func percentEncoded() -> Bool {
            guard index + 2 < scalars.count, isHex(scalars[index + 1]), isHex(scalars[index + 2]) else { return false }
            index += 3
            return true
        }
        func variableName() -> Bool {
            var previousWasDot = true
            var length = 0
            while index < scalars.count {
                let scalar = scalars[index]
                if scalar == "." {
                    guard !previousWasDot else { return false }
                    previousWasDot = true
                    index += 1
                } else if isAlpha(scalar) || isDigit(scalar) || scalar == "_" {
                    previousWasDot = false
                    index += 1
                } else if scalar == "%" {
                    guard percentEncoded() else { return false }
                    previousWasDot = false
                } else {
                    break
                }
                length += 1
            }
            return length > 0 && !previousWasDot
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "%" {
                guard percentEncoded() else { return false }
                continue
            }
            guard scalar == "{" else {
                guard scalar.value > 0x20, scalar.value != 0x7F, !excludedLiterals.contains(scalar) else { return false }
                index += 1
                continue
            }
            index += 1
            if index < scalars.count, operators.contains(scalars[index]) { index += 1 }
            while true {
                guard variableName() else { return false }
                if index < scalars.count, scalars[index] == "*" {
                    index += 1
                } else if index < scalars.count, scalars[index] == ":" {
                    index += 1
                    let digitsStart = index
                    while index < scalars.count, isDigit(scalars[index]) { index += 1 }
                    let length = index - digitsStart
                    guard (1...4).contains(length), scalars[digitsStart] != "0" else { return false }
                }
                guard index < scalars.count else { return false }
                if scalars[index] == "," { index += 1; continue }
                guard scalars[index] == "}" else { return false }
                index += 1
                break
            }
        }
        return true
    }

    private static func jsonPointer(_ scalars: Scalars) -> Bool {
        guard let first = scalars.first else { return true }
        guard first == "/" else { return false }
        for (offset, scalar) in scalars.enumerated() where scalar == "~" {
            let next = scalars.startIndex + offset + 1
            guard next < scalars.endIndex, scalars[next] == "0" || scalars[next] == "1" else { return false }
        }
        return true
    }

    private static func relativeJSONPointer(_ scalars: Scalars) -> Bool {
        let digitCount = scalars.prefix(while: isDigit).count
        guard digitCount > 0, digitCount == 1 || scalars.first != "0" else { return false }
        let rest = scalars.dropFirst(digitCount)
        return rest == ["#"] || jsonPointer(rest)
    }
}
