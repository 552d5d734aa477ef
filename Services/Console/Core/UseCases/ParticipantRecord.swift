import Foundation
import Logging
import StudyModels

/// One participant's page, gathered from the two services that hold them with the admin's token,
/// one call to each: registration's record, runs and weekly report (without the record there is
/// no page), and the response service's number, responses and Sage archives, which stand or fall
/// on their own, saying so when that service cannot answer.
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

    /// Where a page names the participant: at their number (the page's own address), or by
    /// registration's id (an older address, or someone with no data yet).
    package enum Address: Sendable, Equatable {
        case number(Int64)
        case participantId(String)
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

    /// The participant at `address` in `studyId`, with their runs over the weeks the timeline
    /// shows (`RunTimeline.window`). Throws when there is no page: registration has no record of
    /// them, or (at a number) the response service has no such number or no link from it.
    /// At a number, the response service is asked first (its hash names them to registration);
    /// by id, registration first (its record holds the hash their data is found by).
    package func record(
        _ address: Address, of studyId: String, shown: RunTimeline.Shown, now: Date, token: String, logger: Logger
    ) async throws(AdminAPIError) -> Record {
        // Registration starts the runs at their enrolment when it is later.
        let window = RunTimeline.window(enrolledAt: nil, now: now, shown: shown)
        let registration = { (key: RegistrationParticipantKey) async throws(AdminAPIError) -> ParticipantRecordReply in
            try await records.participantRecord(
                key, of: studyId, from: window.from, to: window.to, weeks: Self.weeksShown, token: token, logger: logger)
        }
        switch address {
        case .number(let number):
            let data = try await records.participantData(
                .number(number), of: studyId, responses: Self.responsesShown, archives: Self.archivesShown, token: token, logger: logger)
            guard let hash = data.appTokenSHA256 else { throw Self.noAccount(number, of: studyId) }
            let reply: ParticipantRecordReply
            do {
                reply = try await registration(.appTokenSHA256(hash))
            } catch where error.status == 404 {
                throw Self.noAccount(number, of: studyId)
            }
            return Record(
                detail: reply.participant, number: .known(number), runs: Self.runs(reply), weeks: reply.weeks,
                responses: .listed(data.responses, archives: data.archives))
        case .participantId(let participantId):
            let reply = try await registration(.participantId(participantId))
            var record = Record(
                detail: reply.participant, number: .known(nil), runs: Self.runs(reply), weeks: reply.weeks, responses: .notLinked)
            guard let hash = reply.participant.appTokenSHA256 else { return record }
            let data = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await records.participantData(
                    .appTokenSHA256(hash), of: studyId, responses: Self.responsesShown, archives: Self.archivesShown, token: token,
                    logger: logger)
            }
            switch data {
            case .success(let data):
                record.number = .known(data.participantId)
                record.responses = .listed(data.responses, archives: data.archives)
            case .failure:
                (record.number, record.responses) = (.unavailable, .unavailable)
            }
            return record
        }
    }

    /// Their runs as registration gave them, or why it could not.
    static func runs(_ reply: ParticipantRecordReply) -> Runs {
        if let runs = reply.runs { return .shown(runs) }
        if let problem = reply.runsProblem { return .unavailable(problem) }
        return .notEnrolled
    }

    /// Participant `number` has no page: no app's account stands for them.
    static func noAccount(_ number: Int64, of studyId: String) -> AdminAPIError {
        AdminAPIError(
            status: 404, code: "not_found",
            message: "participant \(number) of study \(studyId) has no account in the app: they enrolled with a token alone, or their data was deleted when they left")
    }
}
