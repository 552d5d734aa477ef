import Foundation
import Hummingbird
import JSONText
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `GET` and `POST /schema/{studyId}/protocol`: the protocol the schema app downloads when a
/// participant enrols, usually from a QR code. The app of today POSTs (a form body it sends with
/// every download, `seed=...`, which means nothing here) and reads the reply's body as the JSON;
/// older builds GET. Only a launched schema study that is enrolling is served; any other answers
/// 404, so no draft is ever seen.
///
/// The protocol is the newest published version's, as imported, with `post_url` naming this
/// deployment's receiver for the study; everything else the app reads is unchanged.
package struct SchemaProtocolRoutes {
    package let published: PublishedStudies
    /// The response service's address as phones reach it.
    package let dataURL: URL

    package init(published: PublishedStudies, dataURL: URL) {
        self.published = published
        self.dataURL = dataURL
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/schema/:studyId/protocol", use: serve)
        router.post("/schema/:studyId/protocol", use: serve)
    }

    /// The URL phones post a study's data to (on the response service's `base`).
    package static func postURL(base: URL, studyId: String) -> String { url(base, studyId, "data") }

    /// The URL the schema app downloads a study's protocol from (on study-metadata's `base`).
    package static func protocolURL(base: URL, studyId: String) -> String { url(base, studyId, "protocol") }

    private static func url(_ base: URL, _ studyId: String, _ last: String) -> String {
        let escaped = studyId.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? studyId
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return "\(text)/schema/\(escaped)/\(last)"
    }

    @Sendable package func serve(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        guard let (version, source) = try await published.servedSchemaProtocol(studyId: studyId) else {
            throw StudyMetadataError.noOpenSchemaProtocol(studyId: studyId)
        }
        let body = await published.replies.reply("schema-protocol:\(studyId):\(version)") {
            var document = source.document
            if case .object(var properties)? = document["properties"], case .object(var top) = document {
                properties["post_url"] = .string(Self.postURL(base: dataURL, studyId: studyId))
                top["properties"] = .object(properties)
                document = .object(top)
            }
            return ByteBuffer(string: document.serialized(sortedKeys: false))
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store", .accessControlAllowOrigin: "*"],
            body: .init(byteBuffer: body))
    }
}
