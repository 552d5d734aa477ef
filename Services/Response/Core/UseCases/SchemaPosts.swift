import Foundation
import StudyModels

/// The schema app's POSTs (docs/schema-protocols.md, Receiving data). The app sends no credential
/// and no idempotency key, so a participant is known by the id their phone made, and a POST by its
/// deduplication key: the first POST from an id makes the participant and gives them an arm;
/// every POST is queued as a response of its module (or of the `SchemaLog` list) unless the same
/// one is stored already. Either way the app is answered 200, and the processing worker puts new
/// ones into the study's tables.
///
/// Every POST is stored by the ingest statement every door shares: a known participant's with
/// group commit, processResponse's among them; a participant's first POST, and a log that changes
/// their status, in one transaction with the participant's row (`SchemaArrivals.storeEnrolling`).
package struct SchemaPosts: Sendable {
    package enum Outcome: Sendable, Equatable {
        case stored(new: Bool, participantId: Int64)
        /// No launched schema study by that id collects data now.
        case unknownStudy
        case notCollecting
        case refused(SchemaSubmission.Problem)
    }

    package let studies: any SchemaStudies
    package let arrivals: any SchemaArrivals

    package init(studies: any SchemaStudies, arrivals: any SchemaArrivals) {
        self.studies = studies
        self.arrivals = arrivals
    }

    package func receive(_ submission: SchemaSubmission, studyId: String) async throws -> Outcome {
        let studyKey = studyId.uppercased()
        guard let study = try await studies.schemaStudy(studyKey), let plan = study.plan else { return .unknownStudy }
        guard [.active, .paused].contains(study.event.status) else { return .unknownStudy }
        guard study.collecting, study.event.status == .active else { return .notCollecting }
        let reception: SchemaReception
        do {
            reception = try SchemaReception.make(submission, study: plan)
        } catch {
            return .refused(error)
        }
        let statusAfter = submission.kind == .log ? Self.status(after: submission) : nil
        if statusAfter == nil {
            let row = ResponseIngest.Row(
                sender: .external(studyKey: studyKey, id: submission.userId), activityId: reception.activityId,
                activityVersion: reception.activityVersion, metadata: reception.metadata, data: reception.data,
                replayKey: submission.dedupKey)
            switch try await arrivals.store(row) {
            case .stored(let new, let participantId): return .stored(new: new, participantId: participantId)
            case .collectionDisabled: return .notCollecting
            // Not known yet: made below. (`withdrawn` bars only an app token's participant.)
            case .unknownParticipant, .withdrawn: break
            }
        }
        switch try await arrivals.storeEnrolling(
            SchemaEnrollingPost(
                studyKey: studyKey, externalId: submission.userId, reception: reception, dedupKey: submission.dedupKey,
                statusAfter: statusAfter, arms: study.event.arms))
        {
        case .stored(let new, let participantId): return .stored(new: new, participantId: participantId)
        case .collectionDisabled: return .notCollecting
        // The participant was made or found in the same transaction: neither can happen.
        case .unknownParticipant, .withdrawn: throw SchemaParticipantNotAdmitted(studyKey: studyKey)
        }
    }

    /// The app logs withdrawal on its settings page and enrolment on its home page; a
    /// participant who withdrew and enrols again keeps their id, so both are followed.
    package static func status(after submission: SchemaSubmission) -> SchemaStatusChange? {
        switch (submission.fields["page"], submission.fields["event"]) {
        case ("settings"?, "withdraw"?): .withdrawn
        case ("home"?, "enrol"?): .enrolled
        default: nil
        }
    }
}

/// The status a schema app log moves its participant to.
package enum SchemaStatusChange: Sendable, Equatable {
    case withdrawn
    case enrolled
}

/// A POST stored with its participant's row: the participant made (and given their place and
/// arm) when the id is new, the response stored unless its deduplication key is, and the status a
/// log announces followed when the response is new.
package struct SchemaEnrollingPost: Sendable, Equatable {
    package var studyKey: String
    package var externalId: String
    package var reception: SchemaReception
    package var dedupKey: String
    package var statusAfter: SchemaStatusChange?
    package var arms: StudyArms?

    package init(
        studyKey: String, externalId: String, reception: SchemaReception, dedupKey: String, statusAfter: SchemaStatusChange?,
        arms: StudyArms?
    ) {
        self.studyKey = studyKey
        self.externalId = externalId
        self.reception = reception
        self.dedupKey = dedupKey
        self.statusAfter = statusAfter
        self.arms = arms
    }
}

/// The ingest statement refused a schema app participant it had just made or found: a fault, not
/// an answer for the app (answered 500 and logged; the app sends the POST again).
package struct SchemaParticipantNotAdmitted: Error {
    package let studyKey: String
}
