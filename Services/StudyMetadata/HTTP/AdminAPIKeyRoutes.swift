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
    package let keys: APIKeyStore
    package let authenticator: AdminTokenAuthenticator

    package init(keys: APIKeyStore, authenticator: AdminTokenAuthenticator) {
        self.keys = keys
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
        let name = TextRules.singleLineField(body.name, maximum: 100)
        var problems: [AdminErrorBody.Problem] = []
        if name == nil {
            problems.append(.init(pointer: "/name", message: "Give the key a name of 1 to 100 characters on one line."))
        }
        let days = body.expiresInDays ?? APIKeyStore.defaultDays
        if !(1...APIKeyStore.maximumDays).contains(days) {
            problems.append(.init(pointer: "/expiresInDays", message: "A key lives 1 to \(APIKeyStore.maximumDays) days."))
        }
        guard let name, problems.isEmpty else { throw APIError.invalid(problems[0].message, problems: problems) }
        do {
            return EditedResponse(status: .created, response: try await keys.create(for: admin, name: name, days: days))
        } catch APIKeyStore.Refusal.tooMany {
            throw APIError.conflict("You have \(APIKeyStore.maximumLive) live keys; revoke one you no longer use first.")
        }
    }

    @Sendable package func list(_ request: Request, context: ServiceRequestContext) async throws -> APIKeyList {
        let admin = try await authenticator.authenticate(request)
        return APIKeyList(keys: try await keys.list(adminId: admin.id))
    }

    @Sendable package func revoke(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let admin = try await authenticator.authenticate(request)
        guard let id = UUID(uuidString: try context.parameters.require("keyId")), try await keys.revoke(id, of: admin) else {
            throw APIError.notFound("You have no API key with that id.")
        }
        return Response(status: .noContent)
    }
}

extension APIKeyCreated: ResponseEncodable {}
extension APIKeyList: ResponseEncodable {}
