import AdminAuthHTTP
import AdminContracts
import Foundation
import HTTPTypes
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `POST|GET /admin/v1/studies/{studyId}/files` (editors upload, viewers list) and
/// `GET /StudyMetaData/files/{fileId}`, where the apps fetch an uploaded image or PDF without a
/// credential, as they fetch any image link: the id is random (122 bits) and names one file for
/// good.
package struct StudyFileRoutes {
    package let files: StudyFileStore

    package init(files: StudyFileStore) {
        self.files = files
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.uploadFile, use: upload)
        routes.on(AdminCalls.files, use: list)
        routes.router.get("/StudyMetaData/files/:fileId", use: serve)
    }

    /// The body is the file itself; `name` (the query) is the name it is shown and served under.
    @Sendable package func upload(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<StudyFile> {
        let studyId = try context.parameters.decoded("studyId")
        let name = request.uri.queryParameters["name"].map(String.init) ?? "file"
        let limit = UploadedFileKind.allCases.map(\.maxBytes).max() ?? 0
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limit + 1)
        } catch {
            throw APIError(.contentTooLarge, code: "too_large", message: "a file may be at most \(limit / 1_048_576) MB")
        }
        return EditedResponse(status: .created, response: try await files.upload(body, name: name, studyId: studyId, by: admin.email))
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> StudyFileList {
        let studyId = try context.parameters.decoded("studyId")
        return StudyFileList(files: try await files.list(studyId: studyId))
    }

    /// The file with its own type, never sniffed by the browser; a PDF in a sandbox (no script);
    /// cached for good, since the id never names other content.
    @Sendable package func serve(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        guard let fileId = UUID(uuidString: try context.parameters.decoded("fileId")),
            let file = try await files.content(fileId)
        else { throw StudyMetadataError.noFile }
        var headers: HTTPFields = [
            .contentType: file.contentType, .cacheControl: "public, max-age=31536000, immutable",
            .eTag: "\"\(file.sha256)\"", HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            .contentSecurityPolicy: "default-src 'none'; sandbox",
            .contentDisposition: "inline; filename=\"\(Self.asciiName(file.name))\"",
        ]
        if request.headers[.ifNoneMatch] == "\"\(file.sha256)\"" {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.content))
    }
}

extension StudyFileRoutes {
    /// The name in a header: ASCII only (anything else, and a quote, becomes `_`).
    static func asciiName(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0 != "\"" ? $0 : "_" }))
    }
}

extension StudyFile: ResponseEncodable {}
extension StudyFileList: ResponseEncodable {}
