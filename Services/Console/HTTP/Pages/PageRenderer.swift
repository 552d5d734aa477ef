import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// The console's HTML: Mustache templates from the target's resources, loaded once at start.
/// Every `{{value}}` is HTML-escaped (quotes too, so values are safe inside attributes). The only
/// unescaped tags allowed are `{{{form}}}`, `{{{chart}}}` and `{{{qr}}}`, which draw `SafeHTML`
/// (escaped as it was written, by `MarkupWriter`, or a QR code's SVG of numbers only); a template
/// with any other unescaped tag is refused at start.
package struct PageRenderer: Sendable {
    let library: MustacheLibrary

    package struct MissingTemplates: Error, CustomStringConvertible {
        package var description: String { "the console's templates are missing from its resources" }
    }

    package struct UnescapedTag: Error, CustomStringConvertible {
        var template: String
        var tag: String
        package var description: String { "template \(template) draws \(tag) unescaped; only {{{form}}}, {{{chart}}} and {{{qr}}} may be" }
    }

    /// The tags that draw `SafeHTML`, the only values drawn unescaped.
    static let safeTags: Set<String> = ["{{{form}}}", "{{{chart}}}", "{{{qr}}}"]

    /// The unescaped tags of a template (`{{{name}}}`, `{{& name}}`) other than the safe ones.
    package static func unescapedTags(in text: String) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let open = rest.range(of: "{{") {
            let after = rest[open.upperBound...]
            guard let close = after.range(of: "}}") else { break }
            let inside = after[..<close.lowerBound]
            if inside.hasPrefix("{") || inside.hasPrefix("&") {
                let tag = "{{" + inside + "}}" + (inside.hasPrefix("{") && after[close.upperBound...].hasPrefix("}") ? "}" : "")
                if !safeTags.contains(tag) { found.append(tag) }
            }
            rest = after[close.upperBound...]
        }
        return found
    }

    /// Loads every `*.mustache` of `Resources/Templates`.
    package init() throws {
        guard let folder = Bundle.module.url(forResource: "Templates", withExtension: nil) else { throw MissingTemplates() }
        var templates: [String: MustacheTemplate] = [:]
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        where file.pathExtension == "mustache" {
            let name = file.deletingPathExtension().lastPathComponent
            let text = try String(contentsOf: file, encoding: .utf8)
            if let tag = Self.unescapedTags(in: text).first { throw UnescapedTag(template: name, tag: tag) }
            templates[name] = try MustacheTemplate(string: text)
        }
        library = MustacheLibrary(templates: templates)
    }

    /// `template` rendered with `context`, as an HTML response that no cache keeps.
    package func page(_ template: String, _ context: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(context, withTemplate: template) ?? "<!doctype html><title>Missing page</title>"
        return Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A redirect after a form (303, so the browser follows with GET).
    package static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}
