import Foundation
import Hummingbird
import Logging
import ResponseCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The admin API here accepts the bearer tokens study-metadata's `POST /admin/v1/login` issues:
/// each request asks study-metadata who the token belongs to (sending its SHA-256, never the
/// token), so a logout or a changed role there holds here at once.
package struct RemoteAdminAuthenticator: Sendable {
    package let client: InternalClient

    package init(client: InternalClient) {
        self.client = client
    }

    package func authenticate(_ request: Request, logger: Logger) async throws -> AdminIdentity {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else {
            throw APIError.unauthenticated("send Authorization: Bearer <token> from study-metadata's POST /admin/v1/login")
        }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty else { throw APIError.unauthenticated("the bearer token is empty") }
        let body = Array(try JSONEncoder().encode(AdminSessionQuery(tokenHash: SecureToken.hash(token))))
        let response: InternalClient.Reply
        do {
            response = try await client.send(.POST, to: .studyMetadata, path: InternalPaths.adminSessions, body: body, logger: logger)
        } catch {
            logger.warning("study-metadata unreachable for an admin check", metadata: ["error": "\(error)"])
            throw APIError.unavailable("admin sign-in cannot be checked now (study-metadata is unreachable); try again")
        }
        switch response.status.code {
        case 200: return try response.decode(AdminIdentity.self)
        case 404: throw APIError.unauthenticated("the token is unknown, expired or revoked; log in again")
        default: throw APIError.unavailable("admin sign-in cannot be checked now (study-metadata answered \(response.status.code))")
        }
    }

    /// The admin, when they hold at least `role` on `studyId`.
    package func require(_ role: StudyRole, on studyId: String, _ request: Request, logger: Logger) async throws -> AdminIdentity {
        let admin = try await authenticate(request, logger: logger)
        guard admin.may(role, on: studyId) else {
            throw APIError.forbidden("this needs the \(role.rawValue) role on study \(studyId)")
        }
        return admin
    }
}

extension RemoteAdminAuthenticator {
    /// The study in the path (`:studyId`), known here from study-metadata's events, and the
    /// admin, who must hold at least `role` on it.
    package func study(_ role: StudyRole, _ request: Request, _ context: ServiceRequestContext, catalog: StudyCatalog)
        async throws -> (StudyCatalog.Study, AdminIdentity)
    {
        let studyId = try context.parameters.require("studyId")
        let admin = try await authenticate(request, logger: context.logger)
        guard let study = try await catalog.study(studyId) else {
            throw APIError.notFound("no study \(studyId) here (study-metadata has not published it)")
        }
        guard admin.may(role, on: study.studyId) else {
            throw APIError.forbidden("this needs the \(role.rawValue) role on study \(study.studyId)")
        }
        return (study, admin)
    }
}
