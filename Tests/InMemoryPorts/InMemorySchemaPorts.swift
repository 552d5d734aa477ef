import Foundation
import ResponseCore
import StudyModels
import Synchronization

/// The schema app's studies and participants in memory, with the rules the SQL keeps: the ingest
/// statement stores only for a participant it knows and a collecting study, a POST's
/// deduplication key stored once per participant, a participant made once per study and id, and
/// a log's status followed only when its response is new.
package final class InMemorySchemaArrivals: SchemaStudies, SchemaArrivals, Sendable {
    package struct Participant: Sendable, Equatable {
        package var id: Int64
        package var status: SchemaStatusChange
        package var ordinal: Int
    }

    private struct State {
        var studies: [String: SchemaStudy] = [:]
        var participants: [String: Participant] = [:]
        var keys: Set<String> = []
        var ingested = 0
        var enrolling = 0
    }

    private let state = Mutex(State())

    package init() {}

    package func add(_ study: SchemaStudy, key: String) {
        state.withLock { $0.studies[key] = study }
    }

    package func participant(studyKey: String, externalId: String) -> Participant? {
        state.withLock { $0.participants["\(studyKey)\u{1F}\(externalId)"] }
    }

    /// How many POSTs went through the shared ingest statement, and how many took the
    /// participant's transaction.
    package var counts: (ingested: Int, enrolling: Int) { state.withLock { ($0.ingested, $0.enrolling) } }

    package var stored: Int { state.withLock { $0.keys.count } }

    package func schemaStudy(_ studyKey: String) async throws -> SchemaStudy? {
        state.withLock { $0.studies[studyKey] }
    }

    package func store(_ row: ResponseIngest.Row) async throws -> ResponseIngest.Outcome {
        guard case .external(let studyKey, let id) = row.sender else { return .unknownParticipant }
        return state.withLock { state in
            state.ingested += 1
            guard let participant = state.participants["\(studyKey)\u{1F}\(id)"] else { return .unknownParticipant }
            guard state.studies[studyKey]?.collecting == true else { return .collectionDisabled(studyKey: studyKey) }
            let new = state.keys.insert("\(participant.id)\u{1F}\(row.replayKey ?? "")").inserted
            return .stored(new: new, participantId: participant.id)
        }
    }

    package func storeEnrolling(_ post: SchemaEnrollingPost) async throws -> ResponseIngest.Outcome {
        state.withLock { state in
            guard state.studies[post.studyKey]?.collecting == true else { return .collectionDisabled(studyKey: post.studyKey) }
            state.enrolling += 1
            let key = "\(post.studyKey)\u{1F}\(post.externalId)"
            var participant =
                state.participants[key]
                ?? Participant(id: Int64(state.participants.count + 1), status: .enrolled, ordinal: state.participants.count)
            let new = state.keys.insert("\(participant.id)\u{1F}\(post.dedupKey)").inserted
            if new, let change = post.statusAfter { participant.status = change }
            state.participants[key] = participant
            return .stored(new: new, participantId: participant.id)
        }
    }
}
