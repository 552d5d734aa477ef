import Foundation
import StudyModels

extension SageArchiveIntake.Failure {
    /// Why the archive's content was refused, in a sentence and by problem: what is kept for the
    /// study's team. Nil for a refusal of the sender or of the request (a damaged body, a token
    /// that admits no one), which keeps nothing: those bytes are not a participant's archive.
    package var contentRefusal: (reason: String, problems: [ValidationProblem])? {
        switch self {
        case .refused(let refusal):
            let problems = refusal.problems.map {
                ValidationProblem(pointer: $0.pointer, message: refusal.file.isEmpty ? $0.message : "\(refusal.file): \($0.message)")
            }
            return ("The archive cannot be read: \(refusal.description)", problems)
        case .noActivity(let assessment, let studyId):
            return (
                "Study \(studyId) has no published activity \(assessment), which the archive answers.",
                [ValidationProblem(pointer: "/assessmentIdentifier", message: "no published activity \(assessment)")])
        case .unknownParticipant, .otherStudy, .withdrawn, .collectionDisabled, .contentMD5Mismatch:
            return nil
        }
    }
}

extension SageArchiveIntake {
    /// What reprocessing a kept archive came to.
    package enum Reprocessed: Sendable, Equatable {
        /// Stored now, or stored before by an earlier reprocessing or the same run sent again.
        case stored(archiveId: UUID)
        /// Refused again, for this reason (the kept archive records it).
        case refusedAgain(reason: String, problems: [ValidationProblem])
        /// The participant withdrew, or the study stopped collecting: nothing is stored for them.
        case notAdmitted(reason: String)
    }

    /// Reads the kept archive `refusalId` of `studyKey` again, with the study as it is published
    /// now, and stores it as its participant's archive when it can be; `actor` is the admin.
    /// Nil when the study has no kept archive by that id.
    package func reprocess(refusalId: UUID, studyKey: String, actor: String) async throws -> Reprocessed? {
        guard let kept = try await refusals.kept(studyKey: studyKey, refusalId: refusalId) else { return nil }
        if let archiveId = kept.archiveId { return .stored(archiveId: archiveId) }
        guard let hash = kept.appTokenHash, !kept.participant.withdrawn else {
            return .notAdmitted(reason: "The participant has withdrawn from the study: nothing more is stored for them.")
        }
        guard kept.participant.collectionEnabled else {
            return .notAdmitted(reason: "Study \(kept.participant.studyId) is not collecting responses now.")
        }
        do {
            let received = try await receive(
                kept.content, contentMD5: nil, from: Sender(participant: kept.participant, appTokenHash: hash), door: nil)
            try await refusals.stored(refusalId: refusalId, archiveId: received.archiveId, studyKey: studyKey, actor: actor)
            return .stored(archiveId: received.archiveId)
        } catch let failure as Failure {
            if let (reason, problems) = failure.contentRefusal {
                try await refusals.refusedAgain(refusalId: refusalId, studyKey: studyKey, reason: reason, problems: problems)
                return .refusedAgain(reason: reason, problems: problems)
            }
            switch failure {
            case .withdrawn, .unknownParticipant:
                return .notAdmitted(reason: "The participant has withdrawn from the study: nothing more is stored for them.")
            case .collectionDisabled(let studyId):
                return .notAdmitted(reason: "Study \(studyId) is not collecting responses now.")
            default:
                throw failure
            }
        }
    }
}
