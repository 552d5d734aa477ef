import Foundation
import Logging
import ServiceKit

/// Completes the Bridge uploads whose bytes were put and whose client did not complete them
/// (docs/sage.md, The Bridge handshake), as Bridge completes an upload when its storage reports
/// the object. Sage's clients delete their copy of an archive once its bytes are put, then send
/// `complete` until a call returns, without reading what it answers: a phone that stays offline
/// past the session, an app the system ends, or a `complete` answered `busy` would otherwise
/// leave the bytes to expire unread.
///
/// Each session put more than `grace` ago and not completed goes through the intake by the app
/// token that opened it, exactly as its client's `complete` would: stored as an archive, or
/// refused for its content and kept as a refused archive with why, or dropped when no participant
/// holds that token any more (they withdrew), as a `complete` from them would be refused. One that
/// cannot be done now (the study paused, the service busy) is taken again later.
package struct SageUploadCompletion: Sendable {
    /// How long a client has to complete its own upload: it calls `complete` as soon as its PUT
    /// ends, so minutes mean it will not.
    package static let grace: Duration = .seconds(300)
    /// Sessions taken in one round; each is read by the intake, two at once at most.
    package static let perRound = 8

    package let intake: SageArchiveIntake
    package let uploads: any SageUploadSessions
    package let grace: Duration
    package let logger: Logger

    package init(intake: SageArchiveIntake, uploads: any SageUploadSessions, grace: Duration = Self.grace, logger: Logger) {
        self.intake = intake
        self.uploads = uploads
        self.grace = grace
        self.logger = logger
    }

    /// Takes the sessions due and completes each; answers how many it took.
    package func round() async throws -> Int {
        let due = try await uploads.claimUncompleted(grace: grace, limit: Self.perRound)
        for upload in due { try await complete(upload) }
        return due.count
    }

    private func complete(_ upload: SageUploadStore.Uncompleted) async throws {
        var metadata: Logger.Metadata = ["upload": "\(upload.id)", "participant": "\(upload.participantId)", "attempt": "\(upload.attempts)"]
        guard let tokenHash = upload.appTokenHash, let participant = try await intake.responses.participant(appTokenHash: tokenHash),
            participant.id == upload.participantId
        else {
            try await uploads.close(id: upload.id, as: .notAdmitted)
            logger.notice("an upload its client did not complete was dropped: no participant holds its token now", metadata: metadata)
            return
        }
        let sender = SageArchiveIntake.Sender(participant: participant, appTokenHash: tokenHash)
        do {
            let stored = try await intake.receive(upload.content, contentMD5: upload.contentMD5, from: sender, door: .upload)
            try await uploads.complete(id: upload.id, archiveId: stored.archiveId)
            metadata["archive"] = "\(stored.archiveId)"
            logger.info("completed an upload its client did not complete", metadata: metadata)
        } catch let failure as SageArchiveIntake.Failure {
            if failure.contentRefusal != nil {
                // The intake kept the bytes as a refused archive, listed to the study's team.
                try await uploads.close(id: upload.id, as: .refused)
                logger.info("an upload its client did not complete was refused for its content and kept", metadata: metadata)
                return
            }
            switch failure {
            case .collectionDisabled:
                logger.info("an upload its client did not complete waits: its study is not collecting", metadata: metadata)
            default:
                try await uploads.close(id: upload.id, as: .notAdmitted)
                metadata["reason"] = "\(failure)"
                logger.notice("an upload its client did not complete was dropped: its participant is not admitted now", metadata: metadata)
            }
        } catch is IntakeLimit.Busy {
            logger.info("an upload its client did not complete waits: the service is busy reading archives", metadata: metadata)
        }
    }
}
