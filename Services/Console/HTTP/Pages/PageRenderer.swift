import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore
import StudyModels

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

    /// HTML escaping scalar by scalar. Mustache's own HTML escaping looks at `Character`s, and a
    /// quote followed by a combining mark (U+0301) is one `Character` that is not a quote: it was
    /// written unescaped, and ended the attribute it stood in.
    struct ScalarHTML: MustacheContentType {
        func escapeText(_ text: String) -> String { HTMLText.escape(text) }
    }

    /// The pragma put before every template, so every `{{value}}` is escaped by `ScalarHTML`.
    static let contentTypeName = "STUDYSTACK_HTML"
    static let pragma = "{{% CONTENT_TYPE: \(contentTypeName)}}"

    /// Loads every `*.mustache` of `Resources/Templates`.
    package init() throws {
        MustacheContentTypes.register(ScalarHTML(), named: Self.contentTypeName)
        guard let folder = Bundle.module.url(forResource: "Templates", withExtension: nil) else { throw MissingTemplates() }
        var templates: [String: MustacheTemplate] = [:]
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        where file.pathExtension == "mustache" {
            let name = file.deletingPathExtension().lastPathComponent
            let text = try String(contentsOf: file, encoding: .utf8)
            if let tag = Self.unescapedTags(in: text).first { throw UnescapedTag(template: name, tag: tag) }
            templates[name] = try MustacheTemplate(string: Self.pragma + text)
        }
        library = MustacheLibrary(templates: templates)
    }

    /// `template` rendered with `context`, as an HTML response that no cache keeps.
    package func page(_ template: String, _ context: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html(template, context))))
    }

    /// `template` rendered with `context`.
    package func html(_ template: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: template) ?? "<!doctype html><title>Missing page</title>"
    }

    /// A redirect after a form (303, so the browser follows with GET).
    package static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}
