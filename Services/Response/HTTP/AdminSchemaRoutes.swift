import AdminAuthHTTP
import Foundation
import Hummingbird
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `GET /admin/v1/studies/{studyId}/schema-participants` (viewer): a schema study's arms with
/// their counts, and its participants with their arm, in order of arrival; `?limit=` (1 to 500,
/// default 100) and `?after=` (the previous page's `next`).
package struct AdminSchemaRoutes {
    package let catalog: StudyCatalog
    package let participants: SchemaParticipantStore
    package let authenticator: RemoteAdminAuthenticator

    package init(catalog: StudyCatalog, participants: SchemaParticipantStore, authenticator: RemoteAdminAuthenticator) {
        self.catalog = catalog
        self.participants = participants
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/admin/v1/studies/:studyId/schema-participants", use: list)
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> SchemaParticipantList {
        let (study, _) = try await authenticator.study(.viewer, request, context, catalog: catalog)
        let query = request.uri.queryParameters
        var limit = 100
        if let text = query.get("limit") {
            guard let value = Int(text), (1...SchemaParticipantStore.maxPage).contains(value) else {
                throw APIError.badRequest("limit must be 1 to \(SchemaParticipantStore.maxPage)", field: "limit")
            }
            limit = value
        }
        var after: Int64?
        if let text = query.get("after") {
            guard let value = Int64(text), value >= 0 else { throw APIError.badRequest("after must be a participant id", field: "after") }
            after = value
        }
        let arms = try await catalog.arms(studyKey: study.key)
        return try await participants.list(studyKey: study.key, arms: arms, after: after, limit: limit)
    }
}

extension SchemaParticipantList: ResponseEncodable {}
