import AdminAuthHTTP
import AdminContracts
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// An admin's API keys, for researchers' scripts (the LabKey query API on the response service):
/// `POST /admin/v1/api-keys` makes one (the key is in that reply only), `GET` lists the admin's
/// own, `DELETE .../{id}` revokes one. Every admin manages their own keys and nobody else's; a key
/// reads only what its admin may read. Signed in with a session token: a key cannot make keys.
package struct AdminAPIKeyRoutes {
    package let keys: APIKeys
    /// The admin's keys, listed as stored.
    package let store: APIKeyStore

    package init(keys: APIKeys, store: APIKeyStore) {
        self.keys = keys
        self.store = store
    }

    package func add(to routes: AdminRouter<AdminTokenAuthenticator>) {
        routes.on(AdminCalls.createAPIKey, use: create)
        routes.on(AdminCalls.apiKeys, use: list)
        routes.on(AdminCalls.revokeAPIKey, use: revoke)
    }

    @Sendable package func create(
        _ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin
    ) async throws -> EditedResponse<APIKeyCreated> {
        let body = try await JSONBody.decode(APIKeyRequest.self, from: request, context: context)
        return EditedResponse(status: .created, response: try await keys.create(for: admin, name: body.name, days: body.expiresInDays))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> APIKeyList {
        return APIKeyList(keys: try await store.list(adminId: admin.id))
    }

    @Sendable package func revoke(_ request: Request, context: ServiceRequestContext, admin: AuthenticatedAdmin) async throws -> Response {
        try await keys.revoke(try context.parameters.decoded("keyId"), of: admin)
        return Response(status: .noContent)
    }
}

extension APIKeyCreated: ResponseEncodable {}
extension APIKeyList: ResponseEncodable {}
