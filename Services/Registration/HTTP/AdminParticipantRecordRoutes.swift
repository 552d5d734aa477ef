import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import Logging
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/participant-record?participantId=|appTokenSHA256=&from=&to=&weeks=`
/// (viewer): one participant's record, runs (from `from` or their enrolment, whichever is later)
/// and weekly report in one reply, what the console's
/// page of one participant reads from this service. Each part is what its own call answers
/// (`.../participants/{participantId}`, `.../runs`, `.../runs/weeks`), with the same checks, the
/// same audit and one sign-in check instead of three. The participant is named by registration's
/// id or by the hash of the participant id their app holds (what the response service links
/// their data by).
package struct AdminParticipantRecordRoutes: Sendable {
    package let participants: AdminParticipantRoutes
    package let runs: ParticipantRuns
    package let reports: RunReportStore
    package let now: @Sendable () -> Date

    package init(
        participants: AdminParticipantRoutes, runs: ParticipantRuns, reports: RunReportStore, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.participants = participants
        self.runs = runs
        self.reports = reports
        self.now = now
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.participantRecord, use: show)
    }

    /// Who the request names: registration's id, or the hash their app's participant id has.
    enum Named {
        case id(UUID)
        case appTokenSHA256(String)
    }

    @Sendable package func show(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ParticipantRecordReply {
        let studyId = try context.parameters.decoded("studyId")
        let parameters = request.uri.queryParameters
        // Every parameter is checked before anything is read.
        let named: Named
        switch (parameters["participantId"], parameters["appTokenSHA256"]) {
        case (let text?, nil):
            guard let id = UUID(uuidString: String(text)) else {
                throw APIError.badRequest("participantId must be a participant's id (a UUID), as the participants list gives it", field: "participantId")
            }
            named = .id(id)
        case (nil, let text?):
            named = .appTokenSHA256(try ParticipantQuery.appTokenSHA256(text))
        default:
            throw APIError.badRequest("name either participantId or appTokenSHA256", field: "participantId")
        }
        let now = now()
        let (asked, to) = try AdminRunRoutes.window(parameters, now: now)
        let weeks =
            try AdminRunReportRoutes.number(parameters["weeks"], name: "weeks", in: 1...AdminRunReportRoutes.mostWeeks)
            ?? AdminRunReportRoutes.defaultWeeks

        let participantId: UUID
        switch named {
        case .id(let id):
            participantId = id
        case .appTokenSHA256(let hash):
            guard let id = try await participants.directory.participantId(studyId: studyId, appTokenSHA256: hash) else {
                throw APIError.notFound("study \(studyId) has no participant whose app holds a participant id with that hash")
            }
            participantId = id
        }
        let detail = try await participants.detail(of: participantId, in: studyId, admin: admin, logger: context.logger)
        guard detail.participant.enrolledAt != nil else {
            return ParticipantRecordReply(participant: detail, runs: nil, runsProblem: nil, weeks: nil)
        }
        // Nothing runs before they enrolled: the window starts there at the earliest (and is
        // empty when they enrolled after it).
        let from = min(max(asked, detail.participant.enrolledAt ?? asked), to)
        let runs = runs
        let logger = context.logger
        // The study's schedule may not be readable: the record stands, saying why.
        async let computed = partOrProblem {
            try await runs.runs(studyId: studyId, participantId: participantId, from: from, to: to, now: now, logger: logger)
        }
        async let report = reports.participantWeeks(studyId: studyId, participantId: participantId, weeks: weeks)
        let (participantRuns, runsProblem) = try await computed
        return ParticipantRecordReply(participant: detail, runs: participantRuns, runsProblem: runsProblem, weeks: try await report)
    }
}

extension ParticipantRecordReply: ResponseEncodable {}
