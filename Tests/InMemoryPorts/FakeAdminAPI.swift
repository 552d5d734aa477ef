import ConsoleCore
import Foundation
import JSONText
import Logging
import StudyModels
import Synchronization

/// The admin APIs as the console's use cases see them, in memory: a study's summary and draft
/// saved over its revision as study-metadata saves it (`If-Match`, 412 when stale), a participant's
/// record with each service's part answered or failing as the test sets, and every call counted.
package final class FakeAdminAPI: StudyDrafts, ParticipantRecords, Sendable {
    /// One admin API's part, failing with this status when set.
    package enum Part: String, Sendable, CaseIterable {
        case participant, numbers, runs, weeks, responses, archives, save
    }

    private struct State {
        var summary: StudySummary
        var draft: JSONValue
        /// Problems study-metadata finds in a saved draft (answered as 422).
        var refusing: [ValidationProblem] = []
        var failing: [Part: Int] = [:]
        var calls: [String] = []
        var detail: ParticipantDetail?
        var numbers: [String: Int64] = [:]
        var runs: ParticipantRunsReply?
        var weeks: ParticipantRunWeeks?
        var responses: [ResponseSummary] = []
        var archives: [SageArchiveSummary] = []
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

    package func participantRecord(
        _ detail: ParticipantDetail, numbers: [String: Int64] = [:], runs: ParticipantRunsReply? = nil, weeks: ParticipantRunWeeks? = nil,
        responses: [ResponseSummary] = [], archives: [SageArchiveSummary] = []
    ) {
        state.withLock { state in
            (state.detail, state.numbers, state.runs, state.weeks) = (detail, numbers, runs, weeks)
            (state.responses, state.archives) = (responses, archives)
        }
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

    package func participant(_ participantId: String, of studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> ParticipantDetail
    {
        try call("participant", .participant)
        guard let detail = state.withLock({ $0.detail }), detail.participant.participantId == participantId else {
            throw AdminAPIError(status: 404, code: "not_found", message: "no participant \(participantId)")
        }
        return detail
    }

    package func participantNumbers(of studyId: String, hashes: [String], token: String, logger: Logger) async throws(AdminAPIError)
        -> [String: Int64]
    {
        try call("participantNumbers", .numbers)
        return state.withLock { $0.numbers.filter { hashes.contains($0.key) } }
    }

    package func participantRuns(_ participantId: String, of studyId: String, from: Date, to: Date, token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantRunsReply
    {
        try call("participantRuns", .runs)
        guard let runs = state.withLock({ $0.runs }) else { throw AdminAPIError(status: 404, code: "not_found", message: "no runs") }
        return runs
    }

    package func participantRunWeeks(_ participantId: String, of studyId: String, weeks: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantRunWeeks
    {
        try call("participantRunWeeks", .weeks)
        guard let report = state.withLock({ $0.weeks }) else { throw AdminAPIError(status: 404, code: "not_found", message: "no weeks") }
        return report
    }

    package func responses(of studyId: String, query: [(String, String)], token: String, logger: Logger) async throws(AdminAPIError)
        -> [ResponseSummary]
    {
        try call("responses", .responses)
        return state.withLock { $0.responses }
    }

    package func sageArchives(of studyId: String, participant: Int64, limit: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> SageArchiveList
    {
        try call("sageArchives", .archives)
        return SageArchiveList(archives: state.withLock { Array($0.archives.prefix(limit)) }, nextBefore: nil)
    }
}
