import ConsoleCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Mustache
import NIOCore
import StudyModels

/// The console's HTML: Mustache templates from the target's resources, loaded once at start.
/// Every `{{value}}` is HTML-escaped (quotes too, so values are safe inside attributes). The only
/// unescaped tags allowed are `{{{form}}}`, `{{{chart}}}`, `{{{qr}}}`, `{{{studyNav}}}`,
/// `{{{cells}}}` (a data grid's row) and `{{{rows}}}` (a long list's rows), which draw `SafeHTML` (escaped as it was written, by
/// `MarkupWriter` or by a template, or a QR code's SVG of numbers only); a template with any
/// other unescaped tag is refused at start.
///
/// A study page's menu (`study-nav.mustache`) is drawn on its own from its `StudyMenu`, and kept
/// by it: every value the menu is drawn from is part of the key, so a page whose menu is the
/// same as one drawn before (most of them: a study's pages differ only in which is open) takes
/// the drawn one.
///
/// A page is a typed `PageView` (with the layout and, on study pages, the study menu). A name a
/// template asks for that the page does not have is logged as an error; with `failOnUnknownNames`
/// (`CONSOLE_TEMPLATE_CHECK=fail`, what the tests run with) the page is not drawn at all but
/// answered 500 with the names, so a typo fails the test that draws it.
package struct PageRenderer: Sendable {
    let library: MustacheLibrary
    let logger: Logger
    let failOnUnknownNames: Bool
    /// The study menus drawn last, by what they were drawn from (version: none).
    let menus = VersionedCache<StudyMenu, SafeHTML>(maxEntries: 2048, maxBytes: 16 * 1024 * 1024)

    package struct MissingTemplates: Error, CustomStringConvertible {
        package var description: String { "the console's templates are missing from its resources" }
    }

    package struct UnescapedTag: Error, CustomStringConvertible {
        var template: String
        var tag: String
        package var description: String {
            "template \(template) draws \(tag) unescaped; only \(PageRenderer.safeTags.sorted().joined(separator: ", ")) may be"
        }
    }

    /// The tags that draw `SafeHTML`, the only values drawn unescaped.
    static let safeTags: Set<String> = ["{{{form}}}", "{{{chart}}}", "{{{qr}}}", "{{{studyNav}}}", "{{{cells}}}", "{{{rows}}}"]

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
    package init(logger: Logger, failOnUnknownNames: Bool) throws {
        self.logger = logger
        self.failOnUnknownNames = failOnUnknownNames
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

    /// The page, as an HTML response that no cache keeps.
    package func page<Body: PageView>(_ page: Page<Body>, status: HTTPResponse.Status = .ok) -> Response {
        let rendered = html(page)
        guard rendered.unknownNames.isEmpty || !failOnUnknownNames else {
            return Response(
                status: .internalServerError, headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: "template \(Body.template) asks for names its page does not have: \(rendered.unknownNames.joined(separator: ", "))\n"
                    )))
        }
        return Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: rendered.text)))
    }

    /// The page's HTML, and the names its template asked for that it does not have (each once,
    /// in the order asked; also logged).
    package func html<Body: PageView>(_ page: Page<Body>) -> (text: String, unknownNames: [String]) {
        var values = TemplateValues.properties(Mirror(reflecting: page.layout))
        var unknownNames: [String] = []
        if let menu = page.menu {
            let nav = studyNav(menu)
            unknownNames = nav.unknownNames
            values["studyNav"] = nav.html
            // The pages' own templates name the study too (`study.studyId`).
            values["study"] = TemplateValues.value(menu.study)
        }
        values.merge(TemplateValues.properties(Mirror(reflecting: page.body))) { $1 }
        let root = PageRoot(values)
        let text = library.render(root, withTemplate: Body.template) ?? "<!doctype html><title>Missing page</title>"
        unknownNames += root.unknownNames.filter { !unknownNames.contains($0) }
        if !unknownNames.isEmpty {
            logger.error(
                "a console template asks for names its page does not have",
                metadata: ["template": "\(Body.template)", "names": "\(unknownNames.joined(separator: ", "))"])
        }
        return (text, unknownNames)
    }

    /// A study's menu, drawn once for each set of values it is drawn from; the names
    /// `study-nav.mustache` asks for that the menu does not have (a menu with any is not kept, so
    /// every page that draws it reports them).
    func studyNav(_ menu: StudyMenu) -> (html: SafeHTML, unknownNames: [String]) {
        if let kept = menus.value(menu, version: "") { return (kept, []) }
        let root = PageRoot(TemplateValues.properties(Mirror(reflecting: menu)))
        let html = SafeHTML(escapedMarkup: library.render(root, withTemplate: "study-nav") ?? "")
        if root.unknownNames.isEmpty { menus.keep(html, under: menu, version: "", bytes: html.renderText.utf8.count) }
        return (html, root.unknownNames)
    }

    /// A redirect after a form (303, so the browser follows with GET).
    package static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }
}
