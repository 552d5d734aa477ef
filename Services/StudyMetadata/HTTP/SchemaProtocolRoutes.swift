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

    /// The URL phones post a study's data to.
    package static func postURL(base: URL, studyId: String) -> String {
        let escaped = studyId.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? studyId
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return "\(text)/schema/\(escaped)/data"
    }

    @Sendable package func serve(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        let missing = APIError.notFound("study \(studyId) has no schema protocol that is open for enrolment")
        guard let standing = try await published.standing(studyId: studyId), standing.status == .active,
            let current = try await published.current(appId: standing.appId, studyId: studyId).first,
            current.status == .active, current.document.enrolling,
            let source = current.document.source, source.format == .schema
        else { throw missing }
        let body = await published.replies.reply("schema-protocol:\(studyId):\(current.version)") {
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
