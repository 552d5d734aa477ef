import Foundation
import Hummingbird
import InternalContracts
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
        group.on(InternalCalls.adminSessions, use: verify)
        group.on(InternalCalls.apiKeys, use: verifyKey)
    }

    @Sendable package func verifyKey(_ call: InternalRequest<APIKeyQuery>) async throws -> AdminIdentity {
        guard let identity = try await keys.identity(keyHash: call.body.keyHash.lowercased()) else {
            throw StudyMetadataError.noLiveKey
        }
        return identity
    }

    @Sendable package func verify(_ call: InternalRequest<AdminSessionQuery>) async throws -> AdminIdentity {
        guard let admin = try await store.authenticated(tokenHash: call.body.tokenHash.lowercased()) else {
            throw StudyMetadataError.noLiveSession
        }
        return AdminIdentity(adminId: admin.id, email: admin.email, role: admin.role, studyRoles: admin.studyRoles)
    }
}
