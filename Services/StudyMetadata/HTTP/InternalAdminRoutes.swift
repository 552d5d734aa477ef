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
///
/// `POST /internal/v1/api-keys/verify` does the same for API keys (the response service's LabKey
/// API), from the key's SHA-256.
package struct InternalAdminRoutes {
    package let store: AdminStore
    package let keys: APIKeyStore

    package init(store: AdminStore, keys: APIKeyStore) {
        self.store = store
        self.keys = keys
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.post("/v1/admin-sessions/verify", use: verify)
        group.post("/v1/api-keys/verify", use: verifyKey)
    }

    @Sendable package func verifyKey(_ request: Request, context: ServiceRequestContext) async throws -> AdminIdentity {
        try context.requireCaller(.response, "check API keys")
        let buffer = try await request.body.collect(upTo: 4096)
        guard let query = try? JSONDecoder().decode(APIKeyQuery.self, from: Data(buffer: buffer)),
            query.keyHash.count == 64, query.keyHash.allSatisfy(\.isHexDigit)
        else {
            throw APIError.badRequest("the body must be {\"keyHash\": \"<64 hex characters>\"}")
        }
        guard let identity = try await keys.identity(keyHash: query.keyHash.lowercased()) else {
            throw StudyMetadataError.noLiveKey
        }
        return identity
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
            throw StudyMetadataError.noLiveSession
        }
        return AdminIdentity(adminId: admin.id, email: admin.email, role: admin.role, studyRoles: admin.studyRoles)
    }
}

extension AdminIdentity: ResponseEncodable {}
