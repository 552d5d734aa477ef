import Foundation
import Hummingbird
import Logging
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The admin APIs of the response and registration services accept the bearer tokens
/// study-metadata's `POST /admin/v1/login` issues: each request asks study-metadata who the token
/// belongs to (sending its SHA-256, never the token), so a logout or a changed role there holds
/// everywhere at once.
public struct RemoteAdminAuthenticator: Sendable {
    public let client: InternalClient

    public init(client: InternalClient) {
        self.client = client
    }

    public func authenticate(_ request: Request, logger: Logger) async throws -> AdminIdentity {
        guard let token = request.bearerToken else {
            throw APIError.unauthenticated("send Authorization: Bearer <token> from study-metadata's POST /admin/v1/login")
        }
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
    public func require(_ role: StudyRole, on studyId: String, _ request: Request, logger: Logger) async throws -> AdminIdentity {
        let admin = try await authenticate(request, logger: logger)
        guard admin.may(role, on: studyId) else {
            throw APIError.forbidden("this needs the \(role.rawValue) role on study \(studyId)")
        }
        return admin
    }
}
