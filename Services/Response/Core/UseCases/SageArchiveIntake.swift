import CMSEnvelope
import Crypto
import Foundation
import SageAssessments
import ServiceKit
import StudyModels

/// Taking a result archive from a Sage client, by either door (docs/sage.md, Receiving archives):
/// `POST /sage/v1/studies/{studyId}/archives`, or Bridge's upload handshake. The participant is
/// the one the app token names, in the study it names; the archive is opened, read and stored
/// with the response its answers become, all before the client hears 201.
package struct SageArchiveIntake: Sendable {
    package enum Failure: Error, Equatable, Sendable {
        /// No participant has that app token.
        case unknownParticipant
        /// The participant is not in the study the path names.
        case otherStudy
        case withdrawn
        case collectionDisabled(studyId: String)
        /// The archive's assessment is no activity of the study's published version.
        case noActivity(assessment: String, studyId: String)
        /// The body is not the bytes its Content-MD5 header describes.
        case contentMD5Mismatch
        case refused(SageArchiveReception.Refusal)
    }

    /// The archive stored, or stored before for the same run (`isNew` false).
    package struct Received: Sendable, Equatable {
        package var archiveId: UUID
        package var isNew: Bool
    }

    package let responses: ResponseStore
    package let archives: SageArchiveStore
    package let schemas: SageSchemaSet

    package init(responses: ResponseStore, archives: SageArchiveStore, schemas: SageSchemaSet) {
        self.responses = responses
        self.archives = archives
        self.schemas = schemas
    }

    /// The participant `appToken` names, still taking part in a study that collects, and (when
    /// `studyId` is given) in that study.
    package func participant(appToken: String, studyId: String?) async throws -> ResponseStore.Participant {
        guard !appToken.isEmpty, appToken.utf8.count <= 256, let participant = try await responses.participant(appToken: appToken) else {
            throw Failure.unknownParticipant
        }
        if let studyId, StudyCatalog.key(studyId) != participant.studyKey { throw Failure.otherStudy }
        guard !participant.withdrawn else { throw Failure.withdrawn }
        guard participant.collectionEnabled else { throw Failure.collectionDisabled(studyId: participant.studyId) }
        return participant
    }

    /// Reads and stores `body` for `participant`; a run stored before answers with its archive.
    /// `contentMD5` is the request's Content-MD5 header (base64), checked when given.
    package func receive(_ body: [UInt8], contentMD5: String?, from participant: ResponseStore.Participant) async throws
        -> Received
    {
        if let contentMD5, Data(Insecure.MD5.hash(data: body)).base64EncodedString() != contentMD5.trimmingCharacters(in: .whitespaces) {
            throw Failure.contentMD5Mismatch
        }
        let key = CMSEnvelope.looksEnveloped(body) ? try await archives.keyPair(studyKey: participant.studyKey) : nil
        let reception: SageArchiveReception
        do {
            reception = try SageArchiveReception.read(body, key: key, schemas: schemas)
        } catch {
            throw Failure.refused(error)
        }
        switch try await archives.store(reception, participantId: participant.id, studyKey: participant.studyKey) {
        case .new(let archiveId): return Received(archiveId: archiveId, isNew: true)
        case .replay(let archiveId): return Received(archiveId: archiveId, isNew: false)
        case .noActivity: throw Failure.noActivity(assessment: reception.assessmentIdentifier, studyId: participant.studyId)
        }
    }
}
