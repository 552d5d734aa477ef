import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/participant-data?participant=|appTokenSHA256=&limit=&archives=`
/// (viewer): one participant's side of the data in one reply (their number, the hash linking it to
/// registration's record, their latest responses and Sage archives), what the console's page of
/// one participant reads from this service.
package struct AdminParticipantDataRoutes {
    package let responses: ResponseAdminStore
    package let archives: SageArchiveStore

    package init(responses: ResponseAdminStore, archives: SageArchiveStore) {
        self.responses = responses
        self.archives = archives
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.participantData, use: show)
    }

    /// The most responses and archives one reply lists (the data grid and the archives list
    /// page on through the rest).
    static let mostResponses = 1000
    static let mostArchives = 500

    @Sendable package func show(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> ParticipantDataReply {
        let query = request.uri.queryParameters
        guard let limit = query["limit"].map({ Int(String($0)) }) ?? 100, (1...Self.mostResponses).contains(limit) else {
            throw APIError.badRequest("limit must be 1 to \(Self.mostResponses)", field: "limit")
        }
        guard let archiveLimit = query["archives"].map({ Int(String($0)) }) ?? 50, (1...Self.mostArchives).contains(archiveLimit) else {
            throw APIError.badRequest("archives must be 1 to \(Self.mostArchives)", field: "archives")
        }
        let found: ResponseAdminStore.ParticipantRow
        switch (query["participant"], query["appTokenSHA256"]) {
        case (let text?, nil):
            let number = try ParticipantQuery.participantNumber(text)
            guard let row = try await responses.participant(studyKey: study.key, number: number) else {
                throw APIError.notFound("study \(study.studyId) has no participant \(number)")
            }
            found = row
        case (nil, let text?):
            let hash = try ParticipantQuery.appTokenSHA256(text)
            // No data yet from their app: nothing to list, and no number.
            guard let row = try await responses.participant(studyKey: study.key, appTokenSHA256: hash) else {
                return ParticipantDataReply(participantId: nil, appTokenSHA256: hash, responses: [], archives: [])
            }
            found = row
        default:
            throw APIError.badRequest("name either participant or appTokenSHA256", field: "participant")
        }
        async let latest = responses.latestResponses(studyKey: study.key, of: found, limit: limit)
        async let sent = archives.list(studyKey: study.key, participantNumber: found.number, before: nil, limit: archiveLimit)
        return ParticipantDataReply(
            participantId: found.number, appTokenSHA256: found.appTokenSHA256, responses: try await latest, archives: try await sent.archives)
    }
}

extension ParticipantDataReply: ResponseEncodable {}
