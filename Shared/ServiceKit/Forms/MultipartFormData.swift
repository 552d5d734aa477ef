import Foundation

/// `multipart/form-data` (RFC 7578), as browsers and WebViews send a form: the console's file
/// uploads, and the schema app's answers. Each part's name and file name come from its
/// `Content-Disposition`; its content is kept as bytes, for the caller to read as text or not.
public enum MultipartFormData {
    public struct Part: Sendable, Equatable {
        public var name: String
        /// Present when the part is a file (possibly empty: no file chosen).
        public var filename: String?
        public var content: [UInt8]
    }

    public enum Failure: Error, Equatable, Sendable {
        /// The body does not follow RFC 7578 (what is wrong).
        case malformed(String)
        /// A part's headers are not UTF-8 text.
        case notText
        /// More parts than the caller takes.
        case tooManyParts
    }

    /// The boundary of a `multipart/form-data` content type, if it is one.
    public static func boundary(contentType: String) -> String? {
        let parameters = contentType.split(separator: ";").map(trimmed)
        guard parameters.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parameters.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            // RFC 2046: 1 to 70 characters.
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// The parts of a body, in order; at most `maxParts` of them.
    public static func parts(_ body: some Collection<UInt8>, boundary: String, maxParts: Int) throws(Failure) -> [Part] {
        let bytes = Array(body)
        let delimiter = Array("--\(boundary)".utf8)
        let crlf: [UInt8] = [13, 10]
        guard var position = find(delimiter, in: bytes, from: 0) else { throw .malformed("no part starts with the boundary") }
        var parts: [Part] = []
        while true {
            position += delimiter.count
            // `--` after a delimiter closes the body.
            if bytes[position..<min(position + 2, bytes.count)].elementsEqual([45, 45]) { break }
            guard bytes[position..<min(position + 2, bytes.count)].elementsEqual(crlf) else {
                throw .malformed("a boundary is not followed by a line break")
            }
            position += 2
            guard let headerEnd = find(crlf + crlf, in: bytes, from: position) else { throw .malformed("a part has no end of headers") }
            guard let headers = String(validating: bytes[position..<headerEnd], as: UTF8.self) else { throw .notText }
            let contentStart = headerEnd + 4
            guard let next = find(crlf + delimiter, in: bytes, from: contentStart) else {
                throw .malformed("a part is not closed by the boundary")
            }
            guard parts.count < maxParts else { throw .tooManyParts }
            let disposition = try disposition(headers)
            parts.append(Part(name: disposition.name, filename: disposition.filename, content: Array(bytes[contentStart..<next])))
            position = next + 2
        }
        return parts
    }

    /// The first index at or after `start` where `needle` begins. (Knuth-Morris-Pratt: linear in
    /// the body whatever the boundary repeats, so a crafted body cannot make the search quadratic.)
    public static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, start <= bytes.count else { return nil }
        // failure[i]: the length of the longest proper prefix of needle[...i] that is also its suffix.
        var failure = [Int](repeating: 0, count: needle.count)
        var length = 0
        for index in 1..<max(needle.count, 1) {
            while length > 0, needle[index] != needle[length] { length = failure[length - 1] }
            if needle[index] == needle[length] { length += 1 }
            failure[index] = length
        }
        var matched = 0
        for index in start..<bytes.count {
            while matched > 0, bytes[index] != needle[matched] { matched = failure[matched - 1] }
            if bytes[index] == needle[matched] { matched += 1 }
            if matched == needle.count { return index - needle.count + 1 }
        }
        return nil
    }

    /// The name (and file name) of a part, from `Content-Disposition: form-data; name="..."`.
    /// Lines are split by their bytes: splitting text by "\r\n" would walk it as characters,
    /// which costs more than the rest of reading a form.
    static func disposition(_ headers: String) throws(Failure) -> (name: String, filename: String?) {
        let bytes = Array(headers.utf8)
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: 10) ?? bytes.count
            defer { lineStart = lineEnd + 1 }
            var line = bytes[lineStart..<lineEnd]
            if line.last == 13 { line = line.dropLast() }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
                asciiCaseInsensitiveEqual(trimmed(line[..<colon]), "content-disposition")
            else { continue }
            var name: String?
            var filename: String?
            for parameter in parameters(of: line[(colon + 1)...]) {
                if asciiCaseInsensitiveEqual(parameter.key.utf8[...], "name") {
                    name = parameter.value
                } else if asciiCaseInsensitiveEqual(parameter.key.utf8[...], "filename") {
                    filename = parameter.value
                }
            }
            guard let name else { throw .malformed("a part has no name") }
            return (name, filename)
        }
        throw .malformed("a part has no Content-Disposition")
    }

    /// `text` without the spaces and tabs around it (read for every part of every POST, so
    /// without Foundation's character sets).
    static func trimmed(_ text: Substring) -> String {
        String(decoding: trimmed(text.utf8[...]), as: UTF8.self)
    }

    static func trimmed<Bytes: BidirectionalCollection<UInt8>>(_ bytes: Bytes) -> Bytes.SubSequence {
        var bytes = bytes[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return bytes
    }

    /// Whether `bytes` spell `lowercase` in any ASCII case (header and parameter names).
    static func asciiCaseInsensitiveEqual(_ bytes: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return bytes.count == expected.count
            && zip(bytes, expected).allSatisfy { byte, wanted in (byte >= 65 && byte <= 90 ? byte | 0x20 : byte) == wanted }
    }

    /// `form-data; name="a;b"; filename="x.json"` → its parameters (quoted values may hold `;`,
    /// and browsers send a quote in a name as `%22`). Read by bytes: read as characters, a quote
    /// followed by a combining mark would be no quote, and walking characters costs more than
    /// the rest of reading a form.
    static func parameters(of bytes: ArraySlice<UInt8>) -> [(key: String, value: String)] {
        let quote = UInt8(ascii: "\""), semicolon = UInt8(ascii: ";"), equals = UInt8(ascii: "=")
        var result: [(key: String, value: String)] = []
        var rest = bytes
        while let equalsIndex = rest.firstIndex(of: equals) {
            let keyStart = rest[..<equalsIndex].lastIndex(of: semicolon).map { $0 + 1 } ?? rest.startIndex
            let key = String(decoding: trimmed(rest[keyStart..<equalsIndex]), as: UTF8.self)
            rest = rest[(equalsIndex + 1)...]
            var parameterValue: String
            if rest.first == quote {
                rest = rest.dropFirst()
                let close = rest.firstIndex(of: quote) ?? rest.endIndex
                parameterValue = String(decoding: rest[..<close], as: UTF8.self)
                rest = close < rest.endIndex ? rest[(close + 1)...] : rest[rest.endIndex...]
            } else {
                let end = rest.firstIndex(of: semicolon) ?? rest.endIndex
                parameterValue = String(decoding: trimmed(rest[..<end]), as: UTF8.self)
                rest = rest[end...]
            }
            if parameterValue.utf8.contains(UInt8(ascii: "%")) {
                parameterValue = parameterValue.replacingOccurrences(of: "%22", with: "\"")
            }
            result.append((key, parameterValue))
        }
        return result
    }
}
