import CMSEnvelope
import Foundation
import ResponseCore
import SageAssessments
import ServiceKit
import StudyModels
import Synchronization

/// The response service's participants and what they sent, in memory: the ports its use cases
/// take (`ResponseArrivals`, `FailedResponses`), with the checks the ingest statement makes as it
/// writes (the token still theirs, not withdrawn, the study collecting).
package final class InMemoryResponses: ResponseArrivals, FailedResponses, Sendable {
    package struct Stored: Sendable, Equatable {
        package var id: Int64
        package var participantId: Int64
        package var activityId: String
        package var version: String
        package var metadata: String
        package var data: String
        /// `error` until reprocessed (`pending`), or as the test sets it.
        package var status: String
        package var againstVersion: String?
    }

    private struct State {
        var participants: [String: ResponseStore.Participant] = [:]
        var responses: [Stored] = []
        var reprocessCalls = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// Enrols a participant whose app holds `appToken`.
    package func enrol(_ participant: ResponseStore.Participant, appToken: String) {
        state.withLock { $0.participants[SecureToken.hash(appToken)] = participant }
    }

    /// Changes what the database says of the participant holding `appToken` (withdrawn, say).
    package func update(appToken: String, _ change: @Sendable (inout ResponseStore.Participant) -> Void) {
        state.withLock { state in
            guard var participant = state.participants[SecureToken.hash(appToken)] else { return }
            change(&participant)
            state.participants[SecureToken.hash(appToken)] = participant
        }
    }

    /// A response already stored with `status` (`error`: failed processing).
    @discardableResult
    package func add(participantId: Int64, activityId: String, version: String, status: String) -> Int64 {
        state.withLock { state in
            let id = Int64(state.responses.count + 1)
            state.responses.append(Stored(
                id: id, participantId: participantId, activityId: activityId, version: version, metadata: "{}", data: "{}",
                status: status))
            return id
        }
    }

    /// The participant whose id is `id`, and the hash of the token their app holds.
    package func participant(id: Int64) -> (participant: ResponseStore.Participant, appTokenHash: String)? {
        state.withLock { state in state.participants.first { $0.value.id == id }.map { ($0.value, $0.key) } }
    }

    package var stored: [Stored] { state.withLock { $0.responses } }
    package var reprocessCalls: Int { state.withLock { $0.reprocessCalls } }

    package func participant(appToken: String) async throws -> ResponseStore.Participant? {
        try await participant(appTokenHash: SecureToken.hash(appToken))
    }

    package func participant(appTokenHash: String) async throws -> ResponseStore.Participant? {
        state.withLock { $0.participants[appTokenHash] }
    }

    package func store(_ row: ResponseIngest.Row) async throws -> ResponseIngest.Outcome {
        state.withLock { state in
            guard case .appToken(let hash) = row.sender, let participant = state.participants[hash] else {
                return .unknownParticipant
            }
            guard !participant.withdrawn else { return .withdrawn }
            guard participant.collectionEnabled else { return .collectionDisabled(studyKey: participant.studyKey) }
            let id = Int64(state.responses.count + 1)
            state.responses.append(Stored(
                id: id, participantId: participant.id, activityId: row.activityId, version: row.activityVersion,
                metadata: row.metadata, data: row.data, status: "pending"))
            return .stored(new: true, participantId: participant.id)
        }
    }

    package func failedActivities(_ ids: [Int64], studyKey: String) async throws -> [String] {
        state.withLock { state in
            let keys = Set(state.participants.values.filter { $0.studyKey == studyKey }.map(\.id))
            let failed = state.responses.filter { ids.contains($0.id) && $0.status == "error" && keys.contains($0.participantId) }
            return Array(Set(failed.map(\.activityId))).sorted()
        }
    }

    package func reprocess(_ ids: [Int64], studyKey: String, actor: String, againstVersion: String?) async throws -> ReprocessOutcome {
        state.withLock { state in
            state.reprocessCalls += 1
            let keys = Set(state.participants.values.filter { $0.studyKey == studyKey }.map(\.id))
            var reprocessed: [Int64] = []
            for index in state.responses.indices
            where ids.contains(state.responses[index].id) && state.responses[index].status == "error"
                && keys.contains(state.responses[index].participantId)
            {
                state.responses[index].status = "pending"
                state.responses[index].againstVersion = againstVersion
                reprocessed.append(state.responses[index].id)
            }
            return ReprocessOutcome(countReprocessed: reprocessed.count, notReprocessed: ids.filter { !reprocessed.contains($0) })
        }
    }
}

/// Study-metadata's published designs, in memory: each version applied, refused as a design
/// that cannot hold answers, or not answered (study-metadata down).
package final class InMemoryDesigns: ActivityDesigns, Sendable {
    package enum Answer: Sendable {
        case applies
        case cannotHoldAnswers(String)
        case unavailable
    }

    private let answers: Mutex<[String: Answer]>
    private let applied = Mutex<[String]>([])

    /// `answers` by `activityId@version`; a version not listed applies.
    package init(_ answers: [String: Answer] = [:]) {
        self.answers = Mutex(answers)
    }

    /// `activityId@version` of every design applied, in order.
    package var appliedVersions: [String] { applied.withLock { $0 } }

    package func ensureApplied(studyKey: String, studyId: String, activityId: String, version: String) async throws {
        let key = "\(activityId)@\(version)"
        switch answers.withLock({ $0[key] }) ?? .applies {
        case .applies: applied.withLock { $0.append(key) }
        case .cannotHoldAnswers(let reason): throw SurveySchema.DesignError(description: reason)
        case .unavailable: throw DesignSource.Unavailable(description: "study-metadata did not answer")
        }
    }
}
