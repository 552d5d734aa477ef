import Foundation

/// The OpenAPI documents under `docs/openapi/`, read as the coverage tests need them: which
/// operations they describe.
public enum OpenAPIDocuments {
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/openapi")

    /// `(METHOD, /path/{param})` of every operation in the YAML documents named, read from their
    /// `paths:` section (two-space indented paths, four-space indented methods, as they are written).
    public static func operations(in names: [String]) throws -> Set<String> {
        var found: Set<String> = []
        for name in names {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            var inPaths = false
            var path: String?
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("paths:") { inPaths = true; continue }
                if inPaths, let first = line.first, first != " ", first != "#" { inPaths = false }
                guard inPaths else { continue }
                if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                    path = String(line.dropFirst(2).dropLast())
                } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                    let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                    if ["get", "post", "put", "delete", "patch", "head", "options"].contains(String(method)) {
                        found.insert("\(method.uppercased()) \(path)")
                    }
                }
            }
        }
        return found
    }

    /// The response statuses each operation documents, by `METHOD /path/{param}` (six-space
    /// `responses:`, eight-space quoted statuses, as they are written).
    public static func statuses(in names: [String]) throws -> [String: Set<Int>] {
        var found: [String: Set<Int>] = [:]
        for name in names {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            var inPaths = false
            var path: String?
            var operation: String?
            var inResponses = false
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("paths:") { inPaths = true; continue }
                if inPaths, let first = line.first, first != " ", first != "#" { inPaths = false }
                guard inPaths else { continue }
                if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                    path = String(line.dropFirst(2).dropLast())
                    operation = nil
                } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                    let method = String(line.trimmingCharacters(in: .whitespaces).dropLast())
                    operation = ["get", "post", "put", "delete", "patch"].contains(method) ? "\(method.uppercased()) \(path)" : nil
                    inResponses = false
                } else if operation != nil, line.hasPrefix("      "), !line.hasPrefix("       ") {
                    inResponses = line.hasPrefix("      responses:")
                } else if let operation, inResponses, line.hasPrefix("        \""), !line.hasPrefix("         "),
                    let status = Int(line.dropFirst(9).prefix(3))
                {
                    found[operation, default: []].insert(status)
                }
            }
        }
        return found
    }

    /// Hummingbird writes parameters `:name`; OpenAPI `{name}`.
    public static func openAPIPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
    }
}
