import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore

/// The console's HTML: Mustache templates from the target's resources, loaded once at start.
/// Every `{{value}}` is HTML-escaped (quotes too, so values are safe inside attributes); the
/// templates use no unescaped form.
package struct PageRenderer: Sendable {
    let library: MustacheLibrary

    package struct MissingTemplates: Error, CustomStringConvertible {
        package var description: String { "the console's templates are missing from its resources" }
    }

    /// Loads every `*.mustache` of `Resources/Templates`.
    package init() throws {
        guard let folder = Bundle.module.url(forResource: "Templates", withExtension: nil) else { throw MissingTemplates() }
        var templates: [String: MustacheTemplate] = [:]
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        where file.pathExtension == "mustache" {
            templates[file.deletingPathExtension().lastPathComponent] = try MustacheTemplate(
                string: String(contentsOf: file, encoding: .utf8))
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
