import Foundation
import Logging
import StudyModels

/// One participant's page, gathered from the three services with the admin's token:
/// registration's record (without it there is no page), then what stands or falls on its own,
/// each saying so when its service cannot answer: their number in the data, their runs and weekly
/// report (once enrolled), and their responses with the Sage archives behind them (once their app
/// reported the participant id the response service knows them by).
package struct ParticipantRecord: Sendable {
    /// Their number in the study's data (the same on every page), when the response service says.
    package enum Number: Sendable, Equatable {
        /// nil: the response service has no data of theirs yet.
        case known(Int64?)
        case unavailable
    }

    package enum Runs: Sendable {
        /// Not enrolled: no runs to show.
        case notEnrolled
        case shown(ParticipantRunsReply)
        /// Registration could not say; why, in its words.
        case unavailable(String)
    }

    package enum Responses: Sendable {
        /// Their app has not reported the participant id their responses carry.
        case notLinked
        /// The response service did not answer.
        case unavailable
        /// Their latest responses, as the response service lists them, and the Sage archives behind them.
        case listed([ResponseSummary], archives: [SageArchiveSummary])
    }

    package struct Record: Sendable {
        package var detail: ParticipantDetail
        package var number: Number
        package var runs: Runs
        /// Their weekly report, when registration answered.
        package var weeks: ParticipantRunWeeks?
        package var responses: Responses
    }

    /// The responses a participant's page lists (the data grid, filtered to them, has the rest).
    package static let responsesShown = 200
    /// The archives it lists.
    package static let archivesShown = 50
    /// The weeks of their report.
    package static let weeksShown = 8

    package let records: any ParticipantRecords

    package init(records: any ParticipantRecords) {
        self.records = records
    }

    /// Participant `participantId` of `studyId`, with their runs over the weeks the timeline
    /// shows (`RunTimeline.window`). Throws only when registration has no record of them to show.
    /// After registration's record, the other parts are asked at once (each its own service
    /// call, none waiting on another but the archives on the responses they came with).
    /// `addressed`: the number the page was opened at and the hash it links to; when the record
    /// has that hash, it is their number and is not asked again.
    package func record(
        _ participantId: String, of studyId: String, shown: RunTimeline.Shown, now: Date, addressed: (number: Int64, hash: String)? = nil,
        token: String, logger: Logger
    ) async throws(AdminAPIError) -> Record {
        let detail = try await records.participant(participantId, of: studyId, token: token, logger: logger)
        let window = RunTimeline.window(enrolledAt: detail.participant.enrolledAt, now: now, shown: shown)
        let hash = detail.appTokenSHA256
        let enrolled = detail.participant.enrolledAt != nil
        let records = records

        async let number: Number = {
            guard let hash else { return .known(nil) }
            // A hash is compared as the bytes it was sent as.
            if let addressed, addressed.hash.utf8.elementsEqual(hash.utf8) { return .known(addressed.number) }
            let numbers = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await records.participantNumbers(of: studyId, hashes: [hash], token: token, logger: logger)
            }
            return (try? numbers.get()).map { .known($0[hash]) } ?? .unavailable
        }()
        async let runs: Runs = {
            guard enrolled else { return .notEnrolled }
            switch await AdminAPIError.outcome({ () async throws(AdminAPIError) in
                try await records.participantRuns(participantId, of: studyId, from: window.from, to: window.to, token: token, logger: logger)
            }) {
            case .success(let runs): return .shown(runs)
            case .failure(let error): return .unavailable(error.message)
            }
        }()
        async let weeks: ParticipantRunWeeks? = {
            guard enrolled else { return nil }
            return try? await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await records.participantRunWeeks(participantId, of: studyId, weeks: Self.weeksShown, token: token, logger: logger)
            }.get()
        }()
        async let responses: Responses = {
            guard let hash else { return .notLinked }
            let listed = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await records.responses(
                    of: studyId, query: [("appTokenSHA256", hash), ("limit", String(Self.responsesShown))], token: token, logger: logger)
            }
            guard case .success(let responses) = listed else { return .unavailable }
            // Each archive a Sage app sent made one of those responses: theirs, with files.
            guard let number = responses.first?.participantId else { return .listed(responses, archives: []) }
            let archives = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await records.sageArchives(of: studyId, participant: number, limit: Self.archivesShown, token: token, logger: logger)
            }
            return .listed(responses, archives: (try? archives.get())?.archives ?? [])
        }()
        return Record(detail: detail, number: await number, runs: await runs, weeks: await weeks, responses: await responses)
    }
}
