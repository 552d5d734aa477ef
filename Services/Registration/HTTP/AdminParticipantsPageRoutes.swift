import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import Logging
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/participants-page?<the participants list's parameters>`
/// (viewer): what the console's participants page reads from this service in one reply: a page of
/// the list, the consent reminders' summary, the sites by name and the adherence per activity.
/// Each part is what its own call answers (`.../participants`, `.../consent-reminders`,
/// `.../sites?counts=false`, `.../adherence`), with the same checks and the same audit, one
/// sign-in check instead of four, and the study's standing asked of study-metadata once for both
/// parts that need it.
package struct AdminParticipantsPageRoutes: Sendable {
    package let participants: AdminParticipantRoutes
    package let reminders: ConsentReminders
    package let sites: SiteStore
    package let adherence: AdherenceStore

    package init(participants: AdminParticipantRoutes, reminders: ConsentReminders, sites: SiteStore, adherence: AdherenceStore) {
        self.participants = participants
        self.reminders = reminders
        self.sites = sites
        self.adherence = adherence
    }

    package func add(to routes: AdminRouter<RemoteAdminAuthenticator>) {
        routes.on(AdminCalls.participantsPage, use: show)
    }

    @Sendable package func show(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity
    ) async throws -> ParticipantsPageReply {
        let studyId = try context.parameters.decoded("studyId")
        // Every parameter is checked before anything is read.
        var query = try AdminParticipantRoutes.query(
            request.uri.queryParameters, studyId: studyId, identities: admin.may(.studyAdmin, on: studyId))
        let (reminders, sites, adherence) = (reminders, sites, adherence)
        // Neither the sites nor the adherence need the study's standing: they are read while it
        // is asked for.
        async let named = sites.sites(studyId: studyId, counted: false)
        async let counts = adherence.adherence(studyId: studyId)
        let standing = try await participants.standing(of: studyId, logger: context.logger)
        query.consentVersionsInForce = standing?.consentVersionsInForce
        // With nothing published the reminders cannot be told: the list stands, saying why.
        async let summary = partOrProblem { try await reminders.summary(studyId: studyId, standing: standing) }
        let list = try await participants.page(query, admin: admin)
        let (consent, problem) = try await summary
        return ParticipantsPageReply(
            participants: list, consentReminders: consent, consentRemindersProblem: problem, sites: try await named, adherence: try await counts)
    }
}

extension ParticipantsPageReply: ResponseEncodable {}
