import AdminAuthHTTP
import Foundation
import Hummingbird
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/participants`: who joined a study, with their state, for the
/// study's admins. The caller signs in at study-metadata; each request asks it who the token
/// belongs to (`RemoteAdminAuthenticator`). E-mail addresses are shown only to a study admin or
/// a super-admin, and each time they are, the audit log says who read them.
package struct AdminParticipantRoutes: Sendable {
    package let directory: ParticipantDirectory
    package let authenticator: RemoteAdminAuthenticator
    package let audit: AuditLog

    /// The most rows of a page.
    package static let maxLimit = 500

    package init(directory: ParticipantDirectory, authenticator: RemoteAdminAuthenticator, audit: AuditLog) {
        self.directory = directory
        self.authenticator = authenticator
        self.audit = audit
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/admin/v1/studies/:studyId/participants", use: list)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> ParticipantList {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticator.require(.viewer, on: studyId, request, logger: context.logger)
        let query = try Self.query(request.uri.queryParameters, studyId: studyId, identities: admin.may(.studyAdmin, on: studyId))
        let list = try await directory.participants(query)
        if query.identities, !list.participants.isEmpty {
            try await audit.record(
                actor: admin.email, action: "participants.identities_read", studyId: studyId,
                details: ["count": String(list.participants.count), "search": query.search ?? "", "status": query.status ?? ""])
        }
        return list
    }

    /// The page asked for, each parameter checked: a wrong one is refused (400) by name.
    static func query(_ parameters: Parameters, studyId: String, identities: Bool) throws -> ParticipantDirectory.Query {
        let status = parameters["status"].map(String.init)
        if let status, !ParticipantList.statuses.contains(status) {
            throw APIError.badRequest("status must be one of \(ParticipantList.statuses.joined(separator: ", "))", field: "status")
        }
        var limit = 50
        if let text = parameters["limit"] {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw APIError.badRequest("limit must be 1 to \(maxLimit)", field: "limit")
            }
            limit = value
        }
        var after: UUID?
        if let text = parameters["after"] {
            guard let value = UUID(uuidString: String(text)) else {
                throw APIError.badRequest("after must be a participantId, as the previous page's next gave it", field: "after")
            }
            after = value
        }
        var search = parameters["q"].map { $0.trimmingCharacters(in: .whitespaces) }
        if search?.isEmpty ?? false { search = nil }
        if let search, search.count > 100 { throw APIError.badRequest("q is at most 100 characters", field: "q") }
        return .init(studyId: studyId, status: status, search: search, limit: limit, after: after, identities: identities)
    }
}

extension ParticipantList: ResponseEncodable {}
