import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The two doors Sage's clients bring result archives through (docs/sage.md, Receiving
/// archives), both authorised by the participant's app token, as a Bearer token or in the
/// `Bridge-Session` header Sage's clients use:
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

    /// What `POST /v3/uploads` may carry: its fields and a metadata object of at most 16 KiB.
    package static let maxUploadRequestBytes = 64 << 10
    package static let maxUploadRequestValues = 4_096

    package let intake: SageArchiveIntake
    package let handshake: SageUploadHandshake
    /// Where phones reach this service: upload URLs start with it.
    package let publicURL: URL
    private var maxArchiveBytes: Int { handshake.maxArchiveBytes }

    package init(intake: SageArchiveIntake, handshake: SageUploadHandshake, publicURL: URL) {
        self.intake = intake
        self.handshake = handshake
        self.publicURL = publicURL
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/sage/v1/studies/:studyId/archives", use: receive)
        router.post("/v3/uploads", use: openUpload)
        router.put("/sage/v1/uploads/:uploadId", use: putUpload)
        router.post("/v3/uploads/:uploadId/complete", use: completeUpload)
    }

    @Sendable package func receive(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        // The token is known before the body is read: a stranger's bytes are never opened.
        let sender = try await intake.admit(appToken: Self.appToken(request), studyId: studyId)
        let body = try await collect(request, upTo: maxArchiveBytes)
        let stored = try await intake.receive(body, contentMD5: request.headers[.contentMD5], from: sender, door: .archives)
        let receipt = SageArchiveReceipt(archiveId: stored.archiveId.uuidString.lowercased())
        var response = try context.responseEncoder.encode(receipt, from: request, context: context)
        if stored.isNew { response.status = HTTPResponse.Status.created }
        return response
    }

    @Sendable package func openUpload(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        // The token is known before the body is read, as with every door.
        let appToken = try Self.appToken(request)
        let participant = try await intake.participant(appToken: appToken, studyId: nil)
        // A handful of fields and a metadata object of at most 16 KiB: read from at most 64 KiB,
        // its metadata built within a budget (docs/security.md, Budgets).
        let upload: UploadRequest
        do {
            upload = try JSONDecoder.budgeted(maxNodes: Self.maxUploadRequestValues).decode(
                UploadRequest.self, from: Data(buffer: try await request.body.collect(upTo: Self.maxUploadRequestBytes)))
        } catch let error as DecodingError {
            throw JSONBody.apiError(for: error)
        } catch is NIOTooManyBytesError {
            throw APIError.contentTooLarge(limit: Self.maxUploadRequestBytes)
        }
        let opened = try await handshake.open(
            .init(
                name: upload.name, contentLength: upload.contentLength, contentMD5: upload.contentMd5,
                contentType: upload.contentType, metadata: upload.metadata),
            for: participant, appTokenHash: SecureToken.hash(appToken))
        var url = publicURL.absoluteString
        if !url.hasSuffix("/") { url += "/" }
        let id = opened.id.uuidString.lowercased()
        let session = UploadSession(id: id, url: "\(url)sage/v1/uploads/\(id)?secret=\(opened.secret)", expires: opened.expires)
        var response = try context.responseEncoder.encode(session, from: request, context: context)
        response.status = .created
        return response
    }

    /// The PUT carries no Bearer token: like Bridge's pre-signed storage URL, its URL is the
    /// credential. It answers as S3 answers a pre-signed URL, since that is what Sage's clients
    /// act on: 403 for a URL that is unknown, wrong or expired (the iOS client retries a 403 with a
    /// new session, and deletes the archive on a 404 or 410), and 200 for bytes put again to an
    /// upload already completed (S3 takes the same object again; they are stored already).
    @Sendable package func putUpload(_ request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let session: SageUploadStore.Awaiting
        do {
            session = try await handshake.awaiting(
                uploadId: try context.parameters.decoded("uploadId"), secret: request.uri.queryParameters["secret"].map(String.init),
                contentMD5: request.headers[.contentMD5], contentType: request.headers[.contentType])
        } catch SageUploadHandshake.Refusal.completed {
            return .ok
        } catch SageUploadHandshake.Refusal.noSuchUpload, SageUploadHandshake.Refusal.expired {
            throw SageUploadHandshake.Refusal.putURLNotValid
        }
        // One byte past the declared length is enough to refuse a longer body.
        let body: [UInt8]
        do {
            body = Array(buffer: try await request.body.collect(upTo: session.length + 1))
        } catch is NIOTooManyBytesError {
            throw SageUploadHandshake.Refusal.bodyLongerThan(session.length)
        }
        do {
            try await handshake.put(body, into: session)
        } catch SageUploadHandshake.Refusal.completed {
            return .ok
        } catch SageUploadHandshake.Refusal.noSuchUpload, SageUploadHandshake.Refusal.expired {
            throw SageUploadHandshake.Refusal.putURLNotValid
        }
        return .ok
    }

    @Sendable package func completeUpload(_ request: Request, context: ServiceRequestContext) async throws -> UploadValidationStatus {
        let id = try context.parameters.decoded("uploadId")
        switch try await handshake.complete(uploadId: id, appToken: try Self.appToken(request)) {
        case .succeeded(let archiveId):
            return UploadValidationStatus(id: id.lowercased(), status: "succeeded", archiveId: archiveId.uuidString.lowercased())
        case .validationFailed(let messages):
            return UploadValidationStatus(id: id.lowercased(), status: "validation_failed", messageList: messages)
        }
    }

    private func collect(_ request: Request, upTo limit: Int) async throws -> [UInt8] {
        do {
            return Array(buffer: try await request.body.collect(upTo: limit))
        } catch is NIOTooManyBytesError {
            throw APIError.contentTooLarge(limit: limit)
        }
    }

    /// The participant's app token: a Bearer token, or the `Bridge-Session` header that Sage's
    /// clients send their session token in (BridgeClientKMM's HTTP client sets it on every call).
    static func appToken(_ request: Request) throws -> String {
        if let token = request.bearerToken { return token }
        if let token = request.headers[.bridgeSession], !token.isEmpty { return token }
        throw APIError.unauthenticated("the participant's app token is required, as a Bearer token or a Bridge-Session header")
    }
}

extension HTTPField.Name {
    /// RFC 1864's digest of the body, which Bridge's clients send with every upload.
    static let contentMD5 = HTTPField.Name("Content-MD5")!
    /// Where Bridge's clients send the participant's session token.
    static let bridgeSession = HTTPField.Name("Bridge-Session")!
}
