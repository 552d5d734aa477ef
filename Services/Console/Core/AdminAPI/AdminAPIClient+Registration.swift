import Foundation
import Logging
import NIOHTTP1
import StudyModels

/// The registration service's admin API: participants, sites and invitations, for the console's
/// running-the-study pages.
extension AdminAPIClient {
    private static func study(_ studyId: String) -> String { "/admin/v1/studies/\(segment(studyId))" }

    /// `query`: the list's parameters as the page received them (`status`, `site`, `q`, `after`).
    package func participants(
        of studyId: String, query: [(String, String)], token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantList {
        try await json(
            .GET, Self.study(studyId) + "/participants" + Self.queryString(query), on: .registration, token: token,
            as: ParticipantList.self, logger: logger)
    }

    package func participant(_ participantId: String, of studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> ParticipantDetail
    {
        try await json(
            .GET, Self.study(studyId) + "/participants/\(Self.segment(participantId))", on: .registration, token: token,
            as: ParticipantDetail.self, logger: logger)
    }

    /// The participant's runs open between `from` and `to`, with their states.
    package func participantRuns(_ participantId: String, of studyId: String, from: Date, to: Date, token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantRunsReply
    {
        let formatter = ISO8601DateFormatter()
        return try await json(
            .GET,
            Self.study(studyId) + "/participants/\(Self.segment(participantId))/runs"
                + Self.queryString([("from", formatter.string(from: from)), ("to", formatter.string(from: to))]),
            on: .registration, token: token, as: ParticipantRunsReply.self, logger: logger)
    }

    package func consentPDFPath(_ consentId: String, of participantId: String, in studyId: String) -> String {
        Self.study(studyId) + "/participants/\(Self.segment(participantId))/consents/\(Self.segment(consentId))/pdf"
    }

    /// The study's runs per activity and week, the last `weeks` weeks to this one.
    package func studyRunWeeks(of studyId: String, weeks: Int, now: Date = Date(), token: String, logger: Logger)
        async throws(AdminAPIError) -> StudyRunWeeks
    {
        let from = UTCDay.string(now.addingTimeInterval(-Double(weeks - 1) * 7 * 86_400))
        return try await json(
            .GET, Self.study(studyId) + "/runs/weeks" + Self.queryString([("from", from), ("to", UTCDay.string(now))]),
            on: .registration, token: token, as: StudyRunWeeks.self, logger: logger)
    }

    /// Who is behind right now; `query` as `GET .../runs/behind` takes it.
    package func participantsBehind(of studyId: String, query: [(String, String)], token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantsBehind
    {
        try await json(
            .GET, Self.study(studyId) + "/runs/behind" + Self.queryString(query), on: .registration, token: token,
            as: ParticipantsBehind.self, logger: logger)
    }

    /// A participant's weekly report, their latest `weeks` weeks.
    package func participantRunWeeks(_ participantId: String, of studyId: String, weeks: Int, token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantRunWeeks
    {
        try await json(
            .GET, Self.study(studyId) + "/participants/\(Self.segment(participantId))/runs/weeks" + Self.queryString([("weeks", String(weeks))]),
            on: .registration, token: token, as: ParticipantRunWeeks.self, logger: logger)
    }

    package func adherence(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ActivityAdherence {
        try await json(.GET, Self.study(studyId) + "/adherence", on: .registration, token: token, as: ActivityAdherence.self, logger: logger)
    }

    /// Who a message sent now reaches: the participants who joined, and their devices.
    package func audience(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudyAudience {
        try await json(.GET, Self.study(studyId) + "/audience", on: .registration, token: token, as: StudyAudience.self, logger: logger)
    }

    package func enrollmentTimeline(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> EnrollmentTimeline {
        try await json(
            .GET, Self.study(studyId) + "/enrollment-timeline", on: .registration, token: token, as: EnrollmentTimeline.self,
            logger: logger)
    }

    package func sites(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> SiteList {
        try await json(.GET, Self.study(studyId) + "/sites", on: .registration, token: token, as: SiteList.self, logger: logger)
    }

    package func createSite(_ site: SiteRequest, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> Site {
        try await json(
            .POST, Self.study(studyId) + "/sites", on: .registration, token: token, body: Self.encoded(site), as: Site.self,
            logger: logger)
    }

    package func invitations(
        of studyId: String, query: [(String, String)], token: String, logger: Logger
    ) async throws(AdminAPIError) -> InvitationList {
        try await json(
            .GET, Self.study(studyId) + "/invitations" + Self.queryString(query), on: .registration, token: token,
            as: InvitationList.self, logger: logger)
    }

    package func invite(_ invitation: InvitationRequest, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> Invitation
    {
        try await json(
            .POST, Self.study(studyId) + "/invitations", on: .registration, token: token, body: Self.encoded(invitation),
            as: Invitation.self, logger: logger)
    }

    package func importInvitations(csv: String, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> InvitationImport
    {
        let reply = try await send(
            .POST, Self.study(studyId) + "/invitations/import", on: .registration, token: token, body: Array(csv.utf8),
            contentType: "text/csv", logger: logger)
        do {
            return try Self.decoder.decode(InvitationImport.self, from: Data(buffer: reply.body))
        } catch {
            throw AdminAPIError(status: reply.status, code: "unexpected_reply", message: "registration answered something unexpected")
        }
    }

    /// `action`: `resend` or `revoke`.
    package func changeInvitation(_ invitationId: String, _ action: String, in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> Invitation
    {
        try await json(
            .POST, Self.study(studyId) + "/invitations/\(Self.segment(invitationId))/\(action)", on: .registration, token: token,
            as: Invitation.self, logger: logger)
    }

    package static func queryString(_ query: [(String, String)]) -> String {
        let kept = query.filter { !$0.1.isEmpty }
        guard !kept.isEmpty else { return "" }
        return "?" + kept.map { "\($0.0)=\(Self.query($0.1))" }.joined(separator: "&")
    }

    static func encoded(_ value: some Encodable) -> [UInt8] {
        Array((try? JSONEncoder().encode(value)) ?? Data())
    }
}
