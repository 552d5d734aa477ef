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
    package let authenticator: AdminTokenAuthenticator

    package init(keys: APIKeys, store: APIKeyStore, authenticator: AdminTokenAuthenticator) {
        self.keys = keys
        self.store = store
        self.authenticator = authenticator
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/admin/v1/api-keys", use: create)
        router.get("/admin/v1/api-keys", use: list)
        router.delete("/admin/v1/api-keys/:keyId", use: revoke)
    }

    @Sendable package func create(_ request: Request, context: ServiceRequestContext) async throws -> EditedResponse<APIKeyCreated> {
        let admin = try await authenticator.authenticate(request)
        let body = try await JSONBody.decode(APIKeyRequest.self, from: request, context: context)
        return EditedResponse(status: .created, response: try await keys.create(for: admin, name: body.name, days: body.expiresInDays))
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> APIKeyList {
        let admin = try await authenticator.authenticate(request)
        return APIKeyList(keys: try await store.list(adminId: admin.id))
    }

    @Sendable package func revoke(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let admin = try await authenticator.authenticate(request)
        try await keys.revoke(try context.parameters.decoded("keyId"), of: admin)
        return Response(status: .noContent)
    }
}

extension APIKeyCreated: ResponseEncodable {}
extension APIKeyList: ResponseEncodable {}
