import AdminContracts
import Foundation
import Logging
import ServiceKit
import StudyModels

/// The registration service's admin API: participants, sites and invitations, for the console's
/// running-the-study pages.
extension AdminAPIClient {
    /// A page of the participants list (`query`, the list's parameters), the consent reminders'
    /// summary, the sites by name and the adherence per activity, in one call (the participants page).
    package func participantsPage(
        of studyId: String, query: [(String, String)], token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantsPageReply {
        try await call(AdminCalls.participantsPage, ["studyId": studyId], query: query, token: token, logger: logger)
    }

    /// Registration's record of one participant, their runs from `from` to `to` and their weekly
    /// report, in one call (the participant's page).
    package func participantRecord(
        _ participant: RegistrationParticipantKey, of studyId: String, from: Date, to: Date, weeks: Int, token: String, logger: Logger
    ) async throws(AdminAPIError) -> ParticipantRecordReply {
        let formatter = ISO8601DateFormatter()
        return try await call(
            AdminCalls.participantRecord, ["studyId": studyId],
            query: [participant.query, ("from", formatter.string(from: from)), ("to", formatter.string(from: to)), ("weeks", String(weeks))],
            token: token, logger: logger)
    }

    /// The study's runs per activity and week, the last `weeks` weeks to this one.
    package func studyRunWeeks(of studyId: String, weeks: Int, now: Date = Date(), token: String, logger: Logger)
        async throws(AdminAPIError) -> StudyRunWeeks
    {
        let from = UTCDay.string(now.addingTimeInterval(-Double(weeks - 1) * 7 * 86_400))
        return try await call(
            AdminCalls.studyRunWeeks, ["studyId": studyId], query: [("from", from), ("to", UTCDay.string(now))], token: token,
            logger: logger)
    }

    /// Who is behind right now; `query` as `GET .../runs/behind` takes it.
    package func participantsBehind(of studyId: String, query: [(String, String)], token: String, logger: Logger)
        async throws(AdminAPIError) -> ParticipantsBehind
    {
        try await call(AdminCalls.participantsBehind, ["studyId": studyId], query: query, token: token, logger: logger)
    }

    /// Reminds everyone who owes a signature (registration decides each outside quiet hours).
    package func remindConsent(_ reminder: ConsentReminderRequest, of studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> ConsentReminderSummary
    {
        try await call(AdminCalls.remindConsent, ["studyId": studyId], body: reminder, token: token, logger: logger)
    }

    package func adherence(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> ActivityAdherence {
        try await call(AdminCalls.adherence, ["studyId": studyId], token: token, logger: logger)
    }

    /// Who a message sent now reaches: the participants who joined, and their devices.
    package func audience(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> StudyAudience {
        try await call(AdminCalls.audience, ["studyId": studyId], token: token, logger: logger)
    }

    package func enrollmentTimeline(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> EnrollmentTimeline {
        try await call(AdminCalls.enrollmentTimeline, ["studyId": studyId], token: token, logger: logger)
    }

    /// The study's sites with their invitations and members counted.
    package func sites(of studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> SiteList {
        try await call(AdminCalls.sites, ["studyId": studyId], token: token, logger: logger)
    }

    package func createSite(_ site: SiteRequest, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError) -> Site {
        try await call(AdminCalls.createSite, ["studyId": studyId], body: site, token: token, logger: logger)
    }

    package func invitations(
        of studyId: String, query: [(String, String)], token: String, logger: Logger
    ) async throws(AdminAPIError) -> InvitationList {
        try await call(AdminCalls.invitations, ["studyId": studyId], query: query, token: token, logger: logger)
    }

    package func invite(_ invitation: InvitationRequest, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> Invitation
    {
        try await call(AdminCalls.invite, ["studyId": studyId], body: invitation, token: token, logger: logger)
    }

    package func importInvitations(csv: String, in studyId: String, token: String, logger: Logger) async throws(AdminAPIError)
        -> InvitationImport
    {
        try await call(AdminCalls.importInvitations, ["studyId": studyId], body: CSVText(csv), token: token, logger: logger)
    }

    package enum InvitationChange: Sendable {
        case resend, revoke
    }

    package func changeInvitation(_ invitationId: String, _ action: InvitationChange, in studyId: String, token: String, logger: Logger)
        async throws(AdminAPIError) -> Invitation
    {
        let endpoint = action == .revoke ? AdminCalls.revokeInvitation : AdminCalls.resendInvitation
        return try await call(endpoint, ["studyId": studyId, "invitationId": invitationId], token: token, logger: logger)
    }
}
