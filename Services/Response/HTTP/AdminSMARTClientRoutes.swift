import AdminAuthHTTP
import AdminContracts
import Foundation
import HTTPTypes
import Hummingbird
import JSONText
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The SMART Backend Services clients of a study's FHIR API (docs/fhir.md, Authorisation):
/// viewers list them; study admins register one with its public keys, and revoke it (its tokens
/// stop at once).
package struct AdminSMARTClientRoutes {
    package let clients: SMARTClientStore
    package let tokenURL: String

    package init(clients: SMARTClientStore, tokenURL: String) {
        self.clients = clients
        self.tokenURL = tokenURL
    }

    package func add(to routes: ResponseAdminRouter) {
        routes.on(AdminCalls.smartClients, use: list)
        routes.on(AdminCalls.registerSMARTClient, use: register)
        routes.on(AdminCalls.revokeSMARTClient, use: revoke)
    }

    func view(_ client: SMARTClientStore.Client) -> SMARTClientView {
        let keys = client.jwks["keys"]?.array?.map { "\($0["kid"]?.string ?? "") (\($0["alg"]?.string ?? ""))" } ?? []
        return SMARTClientView(
            clientId: client.clientId, name: client.name, keys: keys, createdBy: client.createdBy, createdAt: client.createdAt,
            revokedAt: client.revokedAt, tokenURL: tokenURL, deidentified: client.deidentified)
    }

    @Sendable package func list(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> SMARTClientList {
        SMARTClientList(clients: try await clients.clients(studyKey: study.key).map(view))
    }

    @Sendable package func register(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> EditedResponse<SMARTClientView> {
        let body = try await request.body.collect(upTo: SMARTClientKeys.maxBytes + 4_096)
        guard let document = try? JSONValue.parse(
            Array(buffer: body), budget: JSONValue.Budget(maxBytes: SMARTClientKeys.maxBytes + 4_096, maxNodes: 2_100, maxDepth: 8))
        else { throw APIError.badRequest("the body must be {\"name\": \"...\", \"jwks\": {\"keys\": [...]}}", field: "jwks") }
        guard let name = document["name"]?.string?.trimmingCharacters(in: .whitespacesAndNewlines), (1...200).contains(name.count) else {
            throw ResponseAdminError.smartClientInvalid([ValidationProblem(pointer: "/name", message: "must be a name of 1 to 200 characters")])
        }
        let keys: [SMARTClientKeys.Key]
        switch SMARTClientKeys.keys(fromJWKS: document["jwks"] ?? .null) {
        case .success(let found): keys = found
        case .failure(let list): throw ResponseAdminError.smartClientInvalid(list.problems)
        }
        let deidentified: Bool
        switch document["deidentified"] {
        case nil, .null?: deidentified = false
        case .bool(let value)?: deidentified = value
        default:
            throw ResponseAdminError.smartClientInvalid([ValidationProblem(pointer: "/deidentified", message: "must be true or false")])
        }
        let registered = try await clients.register(studyKey: study.key, name: name, keys: keys, deidentified: deidentified, by: admin.email)
        return EditedResponse(status: .created, response: view(registered))
    }

    @Sendable package func revoke(
        _ request: Request, context: ServiceRequestContext, admin: AdminIdentity, study: StudyCatalog.Study
    ) async throws -> HTTPResponse.Status {
        let clientId = try context.parameters.decoded("clientId")
        guard try await clients.revoke(clientId: clientId, studyKey: study.key, by: admin.email) else {
            throw ResponseAdminError.noSMARTClient(studyId: study.studyId)
        }
        return .noContent
    }
}

extension SMARTClientView: ResponseEncodable {}
extension SMARTClientList: ResponseEncodable {}
