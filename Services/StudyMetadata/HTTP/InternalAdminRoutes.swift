import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// `POST /internal/v1/admin-sessions/verify`: the other services' admin APIs (response,
/// registration) accept the bearer tokens this service issues, and ask here who one belongs to.
/// They send the token's SHA-256 (what is stored), so the token itself never travels between
/// services.
package struct InternalAdminRoutes {
    package let store: AdminStore

    package init(store: AdminStore) {
        self.store = store
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("/v1/admin-sessions/verify", use: verify)
    }

    @Sendable package func verify(_ request: Request, context: ServiceRequestContext) async throws -> AdminIdentity {
        try context.requireCaller(oneOf: [.response, .registration], "check admin tokens")
        let buffer = try await request.body.collect(upTo: 4096)
        guard let query = try? JSONDecoder().decode(AdminSessionQuery.self, from: Data(buffer: buffer)),
            query.tokenHash.count == 64, query.tokenHash.allSatisfy(\.isHexDigit)
        else {
            throw APIError.badRequest("the body must be {\"tokenHash\": \"<64 hex characters>\"}")
        }
        guard let admin = try await store.authenticated(tokenHash: query.tokenHash.lowercased()) else {
            throw APIError.notFound("no live admin session has that token")
        }
        return AdminIdentity(adminId: admin.id, email: admin.email, role: admin.role, studyRoles: admin.studyRoles)
    }
}

extension AdminIdentity: ResponseEncodable {}
