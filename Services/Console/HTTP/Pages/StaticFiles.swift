import Crypto
import Foundation
import ServiceKit
import HTTPTypes
import Hummingbird
import NIOCore

/// The console's stylesheet and script, read once from the target's resources and served with
/// a validator, so a browser asks again cheaply and never runs a stale script for long.
package struct StaticFiles: Sendable {
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
        var etag: String
    }

    let files: [String: File]

    package init() throws {
        guard let folder = Bundle.module.url(forResource: "Static", withExtension: nil) else { throw PageRenderer.MissingTemplates() }
        var files: [String: File] = [:]
        for (name, type) in [("console.css", "text/css; charset=utf-8"), ("console.js", "text/javascript; charset=utf-8")] {
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            files[name] = File(bytes: ByteBuffer(bytes: data), contentType: type, etag: "\"" + SHA256.hash(data: data).prefix(12).hexString + "\"")
        }
        self.files = files
    }

    package func add<Context: RequestContext>(to router: Router<Context>) {
        router.get("/static/:file") { request, context -> Response in
            guard let name = context.parameters.get("file"), let file = files[name] else { throw HTTPError(.notFound) }
            if request.headers[.ifNoneMatch] == file.etag {
                return Response(status: .notModified, headers: [.eTag: file.etag])
            }
            return Response(
                status: .ok,
                headers: [.contentType: file.contentType, .eTag: file.etag, .cacheControl: "no-cache"],
                body: .init(byteBuffer: file.bytes))
        }
    }
}
