import AdminContracts
import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's images and PDFs (`/studies/{studyId}/files`): uploaded here (editors) and stored by
/// study-metadata, which checks each one; listed with the address the apps fetch it at, to put
/// in the study's thumbnail, overview, image choice or resource fields (which offer them too).
package struct FileRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/files", use: show)
        router.post("/studies/:studyId/files", use: upload)
        router.get("/studies/:studyId/files/:fileId", use: file)
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let uploaded = request.uri.queryParameters["uploaded"].map(String.init)
        return try await pages.signedIn(request, context) { session, _ in
            try await filesPage(studyId, session: session, context: context, problem: nil, uploaded: uploaded, status: .ok)
        }
    }

    @Sendable func upload(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            guard let file = form?.uploads[FormFields.binaryFileField], !file.bytes.isEmpty else {
                return try await filesPage(
                    studyId, session: session, context: context, problem: "Choose a file to upload.", uploaded: nil,
                    status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.uploadFile(file.bytes, name: file.filename, to: studyId, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let stored):
                return PageRenderer.redirect(
                    to: "/studies/\(AdminAPIClient.segment(studyId))/files" + AdminAPIClient.queryString([("uploaded", stored.fileId)]))
            case .failure(let error) where [409, 413, 415, 422].contains(error.status):
                return try await filesPage(
                    studyId, session: session, context: context, problem: "\(file.filename) was not stored: \(error.message)",
                    uploaded: nil, status: HTTPResponse.Status(code: error.status ?? 422))
            case .failure(let error):
                throw error
            }
        }
    }

    /// A file passed on from study-metadata, for the page's previews (the console's own origin).
    @Sendable func file(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let fileId = try context.parameters.decoded("fileId")
        return try await pages.signedIn(request, context) { session, _ in
            try await pages.api.download(
                path: AdminAPIClient.filePath(fileId), on: .studyMetadata, token: session.token, logger: context.logger
            ).response
        }
    }

    func filesPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, problem: String?, uploaded: String?,
        status: HTTPResponse.Status
    ) async throws -> Response {
        async let files = pages.api.files(of: studyId, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let list = try await files
        let rows = list.map { file in
            FilesView.File(
                fileId: file.fileId, name: file.name, url: file.url, isImage: file.contentType.hasPrefix("image/"),
                kind: file.contentType == "application/pdf" ? "PDF" : file.contentType.dropFirst("image/".count).uppercased(),
                size: StudyPageModels.byteSize(file.bytes), uploadedAt: StudyPageModels.timestamp(file.uploadedAt),
                uploadedBy: file.uploadedBy, preview: "/studies/\(AdminAPIClient.segment(studyId))/files/\(file.fileId)",
                new: file.fileId == uploaded)
        }
        let view = FilesView(
            files: rows, hasFiles: !rows.isEmpty, mayUpload: state.editable, problem: problem,
            uploadedName: list.first { $0.fileId == uploaded }?.name)
        return pages.render(view, title: "Images and PDFs · \(state.summary.name)", session: session, state: state, current: "files", status: status)
    }
}

/// `files.mustache`: the study's uploaded images and PDFs.
struct FilesView: PageView {
    static let template = "files"

    struct File {
        var fileId: String
        var name: String
        /// Where the apps read it.
        var url: String
        var isImage: Bool
        var kind: String
        var size: String
        var uploadedAt: String
        var uploadedBy: String
        /// Where the page previews it (the console's own origin).
        var preview: String
        /// The file just uploaded.
        var new: Bool
    }

    var files: [File]
    var hasFiles: Bool
    var mayUpload: Bool
    /// Why the last upload was refused.
    var problem: String?
    /// The name of the file just uploaded.
    var uploadedName: String?
}
