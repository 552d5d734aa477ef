import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The two doors Sage's clients bring result archives through (docs/sage.md, Receiving
/// archives), both authorised by the participant's app token as a Bearer token:
///
/// - `POST /sage/v1/studies/{studyId}/archives`, the archive as the body (a ZIP, or CMS
///   EnvelopedData sealed for the study's certificate): 201 `{"archiveId"}`, 200 for a run stored
///   before.
/// - Bridge's handshake, as the clients speak it to Bridge: `POST /v3/uploads` opens a session,
///   the bytes are `PUT` to its URL, `POST /v3/uploads/{id}/complete` stores them.
package struct SageArchiveRoutes {
    /// `POST /v3/uploads`, as BridgeClientKMM's `UploadRequest` sends it.
    package struct UploadRequest: Decodable, Sendable {
        package var name: String
        package var contentLength: Int
        package var contentMd5: String
        package var contentType: String
        package var encrypted: Bool?
        package var zipped: Bool?
        package var metadata: JSONValue?
    }

    package struct UploadSession: ResponseEncodable {
        package var id: String
        package var url: String
        package var expires: Date
        package var type = "UploadSession"
    }

    package struct UploadValidationStatus: ResponseEncodable {
        package var id: String
        /// `succeeded`, or `validation_failed` with the reasons in `messageList`.
        package var status: String
        package var messageList: [String]?
        package var archiveId: String?
        package var type = "UploadValidationStatus"
    }

    package let intake: SageArchiveIntake
    package let uploads: SageUploadStore
    package let maxArchiveBytes: Int
    /// Where phones reach this service: upload URLs start with it.
    package let publicURL: URL

    package init(intake: SageArchiveIntake, uploads: SageUploadStore, maxArchiveBytes: Int, publicURL: URL) {
        self.intake = intake
        self.uploads = uploads
        self.maxArchiveBytes = maxArchiveBytes
        self.publicURL = publicURL
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/sage/v1/studies/:studyId/archives", use: receive)
        router.post("/v3/uploads", use: openUpload)
        router.put("/sage/v1/uploads/:uploadId", use: putUpload)
        router.post("/v3/uploads/:uploadId/complete", use: completeUpload)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.require("studyId")
        // The token is known before the body is read: a stranger's bytes are never opened.
        let sender = try await intake.admit(appToken: Self.bearer(request), studyId: studyId)
        let body = try await collect(request, upTo: maxArchiveBytes)
        let stored = try await intake.receive(body, contentMD5: request.headers[.contentMD5], from: sender)
        let receipt = SageArchiveReceipt(archiveId: stored.archiveId.uuidString.lowercased())
        var response = try context.responseEncoder.encode(receipt, from: request, context: context)
        if stored.isNew { response.status = HTTPResponse.Status.created }
        return response
    }

    @Sendable package func openUpload(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let participant = try await intake.participant(appToken: Self.bearer(request), studyId: nil)
        let upload = try await request.decode(as: UploadRequest.self, context: context)
        guard (1...maxArchiveBytes).contains(upload.contentLength) else {
            throw APIError.invalid("contentLength must be 1 to \(maxArchiveBytes) bytes", problems: [.init(pointer: "/contentLength", message: "out of range")])
        }
        guard let md5 = Data(base64Encoded: upload.contentMd5), md5.count == 16 else {
            throw APIError.invalid("contentMd5 must be the body's MD5 in base64", problems: [.init(pointer: "/contentMd5", message: "not an MD5 in base64")])
        }
        guard !upload.name.isEmpty, upload.name.utf8.count <= 255, upload.contentType.utf8.count <= 100,
            !upload.contentType.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw APIError.invalid("name (1 to 255 bytes) and contentType (at most 100) are required", problems: [.init(pointer: "/name", message: "required")])
        }
        let metadata = (upload.metadata ?? .object([:])).serialized(sortedKeys: true)
        guard metadata.utf8.count <= 16 * 1024, !ResponseSubmission.escapesNUL(metadata) else {
            throw APIError.invalid("metadata must be at most 16 KiB of JSON without NUL", problems: [.init(pointer: "/metadata", message: "too large")])
        }
        let opened = try await uploads.open(
            studyKey: participant.studyKey, participantId: participant.id, name: upload.name, contentLength: upload.contentLength,
            contentMD5: upload.contentMd5, contentType: upload.contentType, metadata: metadata)
        switch opened {
        case .tooMany:
            throw APIError.tooManyRequests("\(SageUploadStore.maxOpenPerParticipant) uploads are open already; complete them or wait for them to expire")
        case .opened(let id, let secret, let expires):
            let path = "sage/v1/uploads/\(id.uuidString.lowercased())"
            var url = publicURL.absoluteString
            if !url.hasSuffix("/") { url += "/" }
            let session = UploadSession(id: id.uuidString.lowercased(), url: "\(url)\(path)?secret=\(secret)", expires: expires)
            var response = try context.responseEncoder.encode(session, from: request, context: context)
            response.status = .created
            return response
        }
    }

    /// The PUT carries no Bearer token: like Bridge's pre-signed storage URL, its URL is the
    /// credential.
    @Sendable package func putUpload(_ request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        guard let id = UUID(uuidString: try context.parameters.require("uploadId")),
            let secret = request.uri.queryParameters["secret"].map(String.init), !secret.isEmpty, secret.utf8.count <= 128
        else { throw APIError.notFound("no such upload") }
        let session: SageUploadStore.Awaiting
        switch try await uploads.lookup(id: id, secret: secret) {
        case .awaiting(let found): session = found
        case .closed(let outcome): throw Self.error(outcome)
        }
        // Headers that cannot fill the session are refused before its body is read.
        if let refusal = session.refusal(contentMD5: request.headers[.contentMD5], contentType: request.headers[.contentType]) {
            throw Self.error(refusal)
        }
        // One byte past the declared length is enough to refuse a longer body.
        let body: [UInt8]
        do {
            body = Array(buffer: try await request.body.collect(upTo: session.length + 1))
        } catch is NIOTooManyBytesError {
            throw APIError.badRequest("the body is longer than the \(session.length) bytes the upload was requested for")
        }
        let outcome = try await uploads.put(body, into: session)
        guard outcome == .stored else { throw Self.error(outcome) }
        return .ok
    }

    static func error(_ outcome: SageUploadStore.Put) -> APIError {
        switch outcome {
        case .stored, .unknown: APIError.notFound("no such upload")
        case .expired: APIError(.gone, code: "expired", message: "the upload expired; request a new one")
        case .completed: APIError.conflict("the upload is completed already")
        case .refused(let reason): APIError.badRequest(reason)
        }
    }

    @Sendable package func completeUpload(_ request: Request, context: ServiceRequestContext) async throws -> UploadValidationStatus {
        let sender = try await intake.admit(appToken: Self.bearer(request), studyId: nil)
        guard let id = UUID(uuidString: try context.parameters.require("uploadId")),
            let session = try await uploads.session(id: id, participantId: sender.participant.id)
        else { throw APIError.notFound("no such upload") }
        let idText = id.uuidString.lowercased()
        if let archiveId = session.archiveId {
            return UploadValidationStatus(id: idText, status: "succeeded", archiveId: archiveId.uuidString.lowercased())
        }
        guard let content = session.content else {
            if session.expired { throw APIError(.gone, code: "expired", message: "the upload expired; request a new one") }
            throw APIError.conflict("nothing was put to the upload's URL yet")
        }
        do {
            let stored = try await intake.receive(content, contentMD5: session.contentMD5, from: sender)
            try await uploads.complete(id: id, archiveId: stored.archiveId)
            return UploadValidationStatus(id: idText, status: "succeeded", archiveId: stored.archiveId.uuidString.lowercased())
        } catch SageArchiveIntake.Failure.refused(let refusal) {
            // As Bridge answers: the call succeeded, the archive did not validate; sending the
            // same bytes again cannot change that.
            return UploadValidationStatus(id: idText, status: "validation_failed", messageList: refusal.problems.map {
                "\(refusal.file.isEmpty ? "the archive" : refusal.file)\($0.pointer.isEmpty ? "" : " \($0.pointer)"): \($0.message)"
            })
        }
    }

    private func collect(_ request: Request, upTo limit: Int) async throws -> [UInt8] {
        do {
            return Array(buffer: try await request.body.collect(upTo: limit))
        } catch is NIOTooManyBytesError {
            throw APIError.contentTooLarge(limit: limit)
        }
    }

    static func bearer(_ request: Request) throws -> String {
        guard let token = request.bearerToken else {
            throw APIError.unauthenticated("the participant's app token is required as a Bearer token")
        }
        return token
    }
}

extension SageArchiveIntake.Failure: APIErrorConvertible {
    package var apiError: APIError {
        switch self {
        case .unknownParticipant:
            APIError.unauthenticated("no participant has this app token")
        case .otherStudy:
            APIError.forbidden("this app token is not a participant's of that study")
        case .withdrawn:
            APIError.forbidden("the participant has withdrawn from the study")
        case .collectionDisabled(let studyId):
            APIError.conflict("study \(studyId) is not collecting responses now")
        case .noActivity(let assessment, let studyId):
            APIError.invalid(
                "study \(studyId) has no published activity \(assessment)",
                problems: [.init(pointer: "/assessmentIdentifier", message: "no published activity \(assessment)")])
        case .contentMD5Mismatch:
            APIError.badRequest("the body's MD5 is not its Content-MD5: the bytes were damaged on the way", field: "Content-MD5")
        case .refused(let refusal):
            APIError.invalid(
                "the archive was refused: \(refusal.description)",
                problems: refusal.problems.map {
                    .init(pointer: $0.pointer, message: refusal.file.isEmpty ? $0.message : "\(refusal.file): \($0.message)")
                })
        }
    }
}

extension HTTPField.Name {
    /// RFC 1864's digest of the body, which Bridge's clients send with every upload.
    static let contentMD5 = HTTPField.Name("Content-MD5")!
}
