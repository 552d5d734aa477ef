import ConsoleCore
import Foundation
import JSONText
import Logging
import StudyModels
import Synchronization

/// The admin APIs as the console's use cases see them, in memory: a study's summary and draft
/// saved over its revision as study-metadata saves it (`If-Match`, 412 when stale), a participant as
/// registration and the response service hold them, each service's part answered or failing as the
/// test sets, and every call counted.
package final class FakeAdminAPI: StudyDrafts, ParticipantRecords, Sendable {
    /// One admin API's part, failing with this status when set.
    package enum Part: String, Sendable, CaseIterable {
        case record, data, save
    }

    private struct State {
        var summary: StudySummary
        var draft: JSONValue
        /// Problems study-metadata finds in a saved draft (answered as 422).
        var refusing: [ValidationProblem] = []
        var failing: [Part: Int] = [:]
        var calls: [String] = []
        var record: ParticipantRecordReply?
        var data: ParticipantDataReply?
    }

    private let state: Mutex<State>

    package init(summary: StudySummary, draft: JSONValue) {
        state = Mutex(State(summary: summary, draft: draft))
    }

    /// The calls made, by name, in order.
    package var calls: [String] { state.withLock { $0.calls } }
    package var draft: JSONValue { state.withLock { $0.draft } }
    package var summary: StudySummary { state.withLock { $0.summary } }

    /// `part` answers `status` from now on.
    package func fail(_ part: Part, status: Int) { state.withLock { $0.failing[part] = status } }

    /// Saved drafts are refused with `problems` (422) from now on.
    package func refuseDrafts(_ problems: [ValidationProblem]) { state.withLock { $0.refusing = problems } }

    /// Someone else saves `draft` (a colleague's save between reading and writing).
    package func saveElsewhere(_ draft: JSONValue, by admin: String) {
        state.withLock { state in
            state.draft = draft
            state.summary.draftRevision += 1
            state.summary.draftUpdatedBy = admin
            state.summary.draftUpdatedAt = state.summary.draftUpdatedAt.addingTimeInterval(60)
        }
    }

    /// The participant registration holds (`record`) and the response service's side of them
    /// (`data`, nil when no data of theirs arrived).
    package func hold(_ record: ParticipantRecordReply, data: ParticipantDataReply? = nil) {
        state.withLock { state in (state.record, state.data) = (record, data) }
    }

    private func call(_ name: String, _ part: Part? = nil) throws(AdminAPIError) {
        let status = state.withLock { state in
            state.calls.append(name)
            return part.flatMap { state.failing[$0] }
        }
        if let status { throw AdminAPIError(status: status, code: "fake", message: "\(name) answered \(status)") }
    }

    // MARK: StudyDrafts

    package func study(_ studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudySummary {
        try call("study")
        return summary
    }

    package func apps(token: String, logger: Logger) async throws(AdminAPIError) -> [AppDefinition] {
        try call("apps")
        return []
    }

    package func draft(_ studyId: String, summary: StudySummary?, token: String, logger: Logger) async throws(AdminAPIError)
        -> (document: JSONValue, revision: String)
    {
        try call("draft")
        return state.withLock { ($0.draft, AdminAPIClient.etag($0.summary.draftRevision)) }
    }

    package func saveDraft(
        _ studyId: String, document: JSONValue, precondition: AdminAPIClient.DraftPrecondition, token: String, logger: Logger
    ) async throws(AdminAPIError) -> DraftSaved {
        try call("saveDraft", .save)
        let refusal: AdminAPIError? = state.withLock { state in
            if case .revision(let etag) = precondition, etag != AdminAPIClient.etag(state.summary.draftRevision) {
                return AdminAPIError(status: 412, code: "precondition_failed", message: "the draft changed since it was read")
            }
            if !state.refusing.isEmpty {
                return AdminAPIError(status: 422, code: "invalid", message: "the draft has problems", problems: state.refusing)
            }
            state.draft = document
            state.summary.draftRevision += 1
            return nil
        }
        if let refusal { throw refusal }
        return DraftSaved(studyId: studyId, created: false, warnings: [])
    }

    // MARK: ParticipantRecords

    package func participantRecord(
        _ participant: RegistrationParticipantKey, of studyId: String, from: Date, to: Date, weeks: Int, token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantRecordReply {
        try call("participantRecord", .record)
        let found = state.withLock { state in
            state.record.flatMap { record in
                switch participant {
                case .participantId(let id): record.participant.participant.participantId == id ? record : nil
                case .appTokenSHA256(let hash): record.participant.appTokenSHA256 == hash ? record : nil
                }
            }
        }
        guard let found else { throw AdminAPIError(status: 404, code: "not_found", message: "no participant \(participant)") }
        return found
    }

    package func participantData(
        _ participant: DataParticipantKey, of studyId: String, responses: Int, archives: Int, token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantDataReply {
        try call("participantData", .data)
        let held = state.withLock { $0.data }
        switch participant {
        case .number(let number):
            guard let held, held.participantId == number else {
                throw AdminAPIError(status: 404, code: "not_found", message: "no participant \(number)")
            }
            return held
        case .appTokenSHA256(let hash):
            guard let held, held.appTokenSHA256 == hash else {
                return ParticipantDataReply(participantId: nil, appTokenSHA256: hash, responses: [], archives: [])
            }
            return held
        }
    }
}
