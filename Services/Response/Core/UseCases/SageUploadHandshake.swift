import Foundation
import JSONText
import ServiceKit

/// Bridge's upload handshake as Sage's clients speak it (docs/sage.md): a participant opens an
/// upload for bytes of a declared length and MD5, puts them to the session's URL (whose secret is
/// the credential, as a pre-signed storage URL's is), and completes it, which hands the bytes to
/// `SageArchiveIntake` as the direct door does. Refusals are `SageUploadHandshake.Refusal`s, or
/// the intake's `SageArchiveIntake.Failure`s.
package struct SageUploadHandshake: Sendable {
    package enum Refusal: Error, Equatable, Sendable {
        /// A field of the opening request is out of bounds; nothing was opened.
        case invalidRequest(pointer: String, message: String)
        /// The participant has `SageUploadStore.maxOpenPerParticipant` uploads open already.
        case tooManyOpen
        case noSuchUpload
        case expired
        case completed
        /// The put's headers or bytes cannot fill the session; the reason says which.
        case badPut(String)
        case bodyLongerThan(Int)
        /// Completing before anything was put.
        case nothingPut
        /// A put to a URL that names no open session (unknown, or expired).
        case putURLNotValid
    }

    /// What the client declares when it opens an upload (BridgeClientKMM's `UploadRequest`).
    package struct Declared: Sendable {
        package var name: String
        package var contentLength: Int
        package var contentMD5: String
        package var contentType: String
        package var metadata: JSONValue?

        package init(name: String, contentLength: Int, contentMD5: String, contentType: String, metadata: JSONValue?) {
            self.name = name
            self.contentLength = contentLength
            self.contentMD5 = contentMD5
            self.contentType = contentType
            self.metadata = metadata
        }
    }

    /// How a completed upload fared. A refused archive is not an error of the call: as Bridge
    /// answers, the call succeeded and the archive did not validate.
    package enum Completion: Sendable, Equatable {
        case succeeded(archiveId: UUID)
        case validationFailed([String])
    }

    /// The largest metadata object an upload may carry, as JSON text.
    package static let maxMetadataBytes = 16 * 1024
    package static let maxSecretBytes = 128

    package let intake: SageArchiveIntake
    package let uploads: any SageUploadSessions
    package let maxArchiveBytes: Int

    package init(intake: SageArchiveIntake, uploads: any SageUploadSessions, maxArchiveBytes: Int) {
        self.intake = intake
        self.uploads = uploads
        self.maxArchiveBytes = maxArchiveBytes
    }

    /// Opens an upload for `participant` (whom `SageArchiveIntake.participant(appToken:studyId:)`
    /// found by the app token `appTokenHash` hashes); answers the session and its secret.
    package func open(_ declared: Declared, for participant: ResponseStore.Participant, appTokenHash: String) async throws
        -> (id: UUID, secret: String, expires: Date)
    {
        guard (1...maxArchiveBytes).contains(declared.contentLength) else {
            throw Refusal.invalidRequest(pointer: "/contentLength", message: "contentLength must be 1 to \(maxArchiveBytes) bytes")
        }
        guard let md5 = Data(base64Encoded: declared.contentMD5), md5.count == 16 else {
            throw Refusal.invalidRequest(pointer: "/contentMd5", message: "contentMd5 must be the body's MD5 in base64")
        }
        guard !declared.name.isEmpty, declared.name.utf8.count <= 255, declared.contentType.utf8.count <= 100,
            !declared.contentType.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw Refusal.invalidRequest(pointer: "/name", message: "name (1 to 255 bytes) and contentType (at most 100) are required")
        }
        let metadata = (declared.metadata ?? .object([:])).serialized(sortedKeys: true)
        guard metadata.utf8.count <= Self.maxMetadataBytes, !ResponseSubmission.escapesNUL(metadata) else {
            throw Refusal.invalidRequest(pointer: "/metadata", message: "metadata must be at most 16 KiB of JSON without NUL")
        }
        let opened = try await uploads.open(
            studyKey: participant.studyKey, participantId: participant.id, appTokenHash: appTokenHash, name: declared.name,
            contentLength: declared.contentLength, contentMD5: declared.contentMD5, contentType: declared.contentType,
            metadata: metadata)
        switch opened {
        case .tooMany: throw Refusal.tooManyOpen
        case .opened(let id, let secret, let expires): return (id, secret, expires)
        }
    }

    /// The session a put may fill: its URL's id and secret are right, it is open, and the put's
    /// headers agree with what was declared. Asked before the body is read.
    package func awaiting(uploadId: String, secret: String?, contentMD5: String?, contentType: String?) async throws
        -> SageUploadStore.Awaiting
    {
        guard let id = UUID(uuidString: uploadId), let secret, !secret.isEmpty, secret.utf8.count <= Self.maxSecretBytes else {
            throw Refusal.noSuchUpload
        }
        switch try await uploads.lookup(id: id, secret: secret) {
        case .closed(let outcome): throw Self.refusal(outcome)
        case .awaiting(let session):
            if let refusal = session.refusal(contentMD5: contentMD5, contentType: contentType) { throw Self.refusal(refusal) }
            return session
        }
    }

    /// Keeps the put's bytes in `session`.
    package func put(_ bytes: [UInt8], into session: SageUploadStore.Awaiting) async throws {
        let outcome = try await uploads.put(bytes, into: session)
        guard outcome == .stored else { throw Self.refusal(outcome) }
    }

    /// Stores the upload's bytes as an archive of the participant `appToken` names; completing
    /// one that was completed before answers the same archive.
    package func complete(uploadId: String, appToken: String) async throws -> Completion {
        let sender = try await intake.admit(appToken: appToken, studyId: nil)
        guard let id = UUID(uuidString: uploadId), let session = try await uploads.session(id: id, participantId: sender.participant.id)
        else { throw Refusal.noSuchUpload }
        if let archiveId = session.archiveId { return .succeeded(archiveId: archiveId) }
        guard let content = session.content else { throw session.expired ? Refusal.expired : Refusal.nothingPut }
        do {
            let stored = try await intake.receive(content, contentMD5: session.contentMD5, from: sender, door: .upload)
            try await uploads.complete(id: id, archiveId: stored.archiveId)
            return .succeeded(archiveId: stored.archiveId)
        } catch let failure as SageArchiveIntake.Failure where failure.contentRefusal != nil {
            // The intake kept the bytes as a refused archive: the session is not completed again.
            try await uploads.close(id: id, as: .refused)
            // Sending the same bytes again cannot change this, so it is the upload's answer.
            guard case .refused(let refusal) = failure else { throw failure }
            return .validationFailed(refusal.problems.map {
                "\(refusal.file.isEmpty ? "the archive" : refusal.file)\($0.pointer.isEmpty ? "" : " \($0.pointer)"): \($0.message)"
            })
        }
    }

    static func refusal(_ outcome: SageUploadStore.Put) -> Refusal {
        switch outcome {
        case .stored, .unknown: .noSuchUpload
        case .expired: .expired
        case .completed: .completed
        case .refused(let reason): .badPut(reason)
        }
    }
}
