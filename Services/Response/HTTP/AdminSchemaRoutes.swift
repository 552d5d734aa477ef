import AdminAuthHTTP
import AdminContracts
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

    package init(catalog: StudyCatalog, participants: SchemaParticipantStore) {
        self.catalog = catalog
        self.participants = participants
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.schemaParticipants, use: list)
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> SchemaParticipantList {
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
