import CMSEnvelope
import Crypto
import Foundation
import SageAssessments
import ServiceKit
import StudyModels

/// Taking a result archive from a Sage client, by either door (docs/sage.md, Receiving archives):
/// `POST /sage/v1/studies/{studyId}/archives`, or Bridge's upload handshake. The participant is
/// the one the app token names, in the study it names; the archive is opened, read and stored
/// with the response its answers become, all before the client hears 201. An archive refused
/// for its content (it cannot be read, or the study has no activity for it) is kept as it
/// arrived, with why, before the refusal is answered: Sage's clients delete their copy whatever
/// the server answers, and the study's team can reprocess it once the study is mended.
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

    /// A participant admitted to send an archive, and the hash of the app token that admitted
    /// them: the write checks it again.
    package struct Sender: Sendable, Equatable {
        package var participant: ResponseStore.Participant
        package var appTokenHash: String
    }

    package let responses: any ParticipantsByToken
    package let archives: any SageArchiveKeeping
    package let refusals: any RefusedArchiveKeeping
    package let schemas: SageSchemaSet
    /// How many archives this process opens and reads at once, and how many may wait: each holds
    /// up to its inflated files and what their JSON builds (docs/security.md, Budgets).
    package let reading: IntakeLimit
    /// Participants admitted in the last `admissionLifetime`, by app-token hash. Archives come in
    /// bursts from the same phones; with this the body is still read only after its token is
    /// known, without a round trip of its own each time. A copy is never the last word: the write
    /// checks the token, the participant's standing and the study's collection again.
    private let admitted: ExpiringCache<String, ResponseStore.Participant>
    package static let admissionLifetime = Duration.seconds(30)

    package static let maxReadingAtOnce = 2
    /// What the archives waiting their turn may hold together: each holds its body, up to the
    /// largest archive taken, so the line is as long as that many of the largest fit in this.
    package static let waitingBytes = 64 << 20

    /// How many archives may wait to be read when each may be `archiveBytes` long: between 1
    /// and 64 (eight for the default 8 MiB).
    package static func maxWaitingToRead(archiveBytes: Int) -> Int {
        min(64, max(1, waitingBytes / max(1, archiveBytes)))
    }

    package init(
        responses: any ParticipantsByToken, archives: any SageArchiveKeeping, refusals: any RefusedArchiveKeeping,
        schemas: SageSchemaSet, maxArchiveBytes: Int
    ) {
        self.init(
            responses: responses, archives: archives, refusals: refusals, schemas: schemas,
            reading: IntakeLimit(maxRunning: Self.maxReadingAtOnce, maxWaiting: Self.maxWaitingToRead(archiveBytes: maxArchiveBytes)))
    }

    package init(
        responses: any ParticipantsByToken, archives: any SageArchiveKeeping, refusals: any RefusedArchiveKeeping,
        schemas: SageSchemaSet, reading: IntakeLimit
    ) {
        self.responses = responses
        self.archives = archives
        self.refusals = refusals
        self.schemas = schemas
        self.reading = reading
        admitted = ExpiringCache(timeToLive: Self.admissionLifetime, capacity: 10_000)
    }

    /// The participant `appToken` names, still taking part in a study that collects, and (when
    /// `studyId` is given) in that study, as the database says now.
    package func participant(appToken: String, studyId: String?) async throws -> ResponseStore.Participant {
        guard Self.plausible(appToken), let participant = try await responses.participant(appToken: appToken) else {
            throw Failure.unknownParticipant
        }
        try Self.check(participant, studyId: studyId)
        return participant
    }

    /// The sender of an archive: as `participant`, from this replica's copy when it read the same
    /// token a moment ago (the write checks again, so a token withdrawn since stores nothing).
    package func admit(appToken: String, studyId: String?) async throws -> Sender {
        guard Self.plausible(appToken) else { throw Failure.unknownParticipant }
        let hash = SecureToken.hash(appToken)
        if let known = admitted.value(hash) {
            try Self.check(known, studyId: studyId)
            return Sender(participant: known, appTokenHash: hash)
        }
        let readAt = ContinuousClock.now
        let participant = try await participant(appToken: appToken, studyId: nil)
        admitted.keep(participant, for: hash, readAt: readAt)
        try Self.check(participant, studyId: studyId)
        return Sender(participant: participant, appTokenHash: hash)
    }

    private static func plausible(_ appToken: String) -> Bool { !appToken.isEmpty && appToken.utf8.count <= 256 }

    private static func check(_ participant: ResponseStore.Participant, studyId: String?) throws {
        if let studyId, StudyCatalog.key(studyId) != participant.studyKey { throw Failure.otherStudy }
        guard !participant.withdrawn else { throw Failure.withdrawn }
        guard participant.collectionEnabled else { throw Failure.collectionDisabled(studyId: participant.studyId) }
    }

    /// Reads and stores `body` from `sender`; a run stored before answers with its archive.
    /// `contentMD5` is the request's Content-MD5 header (base64), checked when given. Refused for
    /// its content, the body is kept first (`door`: where it came in; nil when it is a kept
    /// archive being reprocessed, which records its own outcome).
    package func receive(_ body: [UInt8], contentMD5: String?, from sender: Sender, door: SageRefusalStore.Door?) async throws -> Received {
        do {
            return try await read(body, contentMD5: contentMD5, from: sender)
        } catch let failure as Failure {
            guard let door, let (reason, problems) = failure.contentRefusal else { throw failure }
            try await refusals.keep(
                body, sha256: SHA256.hash(data: body).hexString, participantId: sender.participant.id,
                studyKey: sender.participant.studyKey, door: door, reason: reason, problems: problems)
            throw failure
        }
    }

    private func read(_ body: [UInt8], contentMD5: String?, from sender: Sender) async throws -> Received {
        if let contentMD5, Data(Insecure.MD5.hash(data: body)).base64EncodedString() != contentMD5.trimmingCharacters(in: .whitespaces) {
            throw Failure.contentMD5Mismatch
        }
        let participant = sender.participant
        let key = CMSEnvelope.looksEnveloped(body) ? try await archives.keyPair(studyKey: participant.studyKey) : nil
        let schemas = schemas
        let read: Result<SageArchiveReception, SageArchiveReception.Refusal> = try await reading.run {
            Result { () throws(SageArchiveReception.Refusal) in try SageArchiveReception.read(body, key: key, schemas: schemas) }
        }
        let reception: SageArchiveReception
        switch read {
        case .success(let read): reception = read
        case .failure(let refusal): throw Failure.refused(refusal)
        }
        // The copy that admitted the sender may be out of date: then the database says why, and
        // a sender it admits after all (re-enabled in between) is stored on a second try.
        for attempt in 1...2 {
            let outcome = try await archives.store(
                reception, participantId: participant.id, studyKey: participant.studyKey, appTokenHash: sender.appTokenHash)
            switch outcome {
            case .new(let archiveId): return Received(archiveId: archiveId, isNew: true)
            case .replay(let archiveId): return Received(archiveId: archiveId, isNew: false)
            case .noActivity: throw Failure.noActivity(assessment: reception.assessmentIdentifier, studyId: participant.studyId)
            case .notAdmitted:
                admitted.forget(sender.appTokenHash)
                guard attempt == 1, let now = try await responses.participant(appTokenHash: sender.appTokenHash), now.id == participant.id
                else { throw Failure.unknownParticipant }
                try Self.check(now, studyId: nil)
            }
        }
        throw Failure.unknownParticipant
    }
}
