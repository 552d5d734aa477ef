import Foundation

/// A path with `{name}` for each parameter (`/admin/v1/studies/{studyId}/sites`), as an endpoint
/// is defined once for its callers and its router: the caller fills it in, the router reads the
/// same template as its route pattern.
public struct PathTemplate: Sendable, Equatable, CustomStringConvertible {
    public let template: String

    public init(_ template: String) {
        self.template = template
    }

    public var description: String { template }

    /// What a segment keeps unescaped when it is filled in: a value is always one segment.
    private static let segmentAllowed = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))

    /// The parameters named in the template, in order.
    public var parameterNames: [String] {
        template.split(separator: "/").compactMap(Self.parameterName)
    }

    private static func parameterName(_ segment: Substring) -> String? {
        segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2 ? String(segment.dropFirst().dropLast()) : nil
    }

    /// The template with each `{name}` replaced by its value, percent-encoded as one segment; nil
    /// when a value is missing or empty (the name of the first one missing is `missing`).
    public func filled(_ parameters: [String: String]) -> Result<String, MissingParameter> {
        var path = ""
        for segment in template.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            path += "/"
            if let name = Self.parameterName(segment) {
                guard let value = parameters[name], !value.isEmpty else { return .failure(MissingParameter(name: name)) }
                path += Self.escaped(value)
            } else {
                path += segment
            }
        }
        return .success(path)
    }

    public struct MissingParameter: Error, Sendable {
        public let name: String
    }

    /// One value as one path segment. Ids are nearly always letters, digits, `-` and `_`, which
    /// need nothing: those are returned as they are without Foundation's encoder (a console page
    /// writes a study's id into dozens of links).
    public static func escaped(_ value: String) -> String {
        if value.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D
                || byte == 0x5F
        }) {
            return value
        }
        return value.addingPercentEncoding(withAllowedCharacters: segmentAllowed) ?? value
    }

    /// The route as a Hummingbird router spells it (`{name}` as `:name`), without `prefix` when
    /// the template starts with it (a route mounted in a group at that prefix).
    public func routePattern(under prefix: String = "") -> String {
        let pattern = template.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            Self.parameterName(segment).map { ":" + $0 } ?? String(segment)
        }.joined(separator: "/")
        return !prefix.isEmpty && pattern.hasPrefix(prefix) ? String(pattern.dropFirst(prefix.count)) : pattern
    }
}
