import Foundation
import Hummingbird
import InternalContracts
import Logging
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The admin APIs of the response and registration services accept the bearer tokens
/// study-metadata's `POST /admin/v1/login` issues: each request asks study-metadata who the token
/// belongs to (sending its SHA-256, never the token), so a logout or a changed role there holds
/// everywhere at once.
public struct RemoteAdminAuthenticator: AdminAuthenticating {
    public let client: InternalClient

    public init(client: InternalClient) {
        self.client = client
    }

    public func authenticate(_ request: Request, logger: Logger) async throws -> AdminIdentity {
        guard let token = request.bearerToken else {
            throw APIError.unauthenticated("send Authorization: Bearer <token> from study-metadata's POST /admin/v1/login")
        }
        let answer: InternalAnswer<AdminIdentity>
        do {
            answer = try await client.call(
                InternalCalls.adminSessions, body: AdminSessionQuery(tokenHash: SecureToken.hash(token)), logger: logger)
        } catch {
            logger.warning("study-metadata could not check an admin token", metadata: ["error": "\(error)"])
            throw APIError.unavailable("admin sign-in cannot be checked now (study-metadata is unreachable or failing); try again")
        }
        switch answer {
        case .answered(let identity): return identity
        case .refused: throw APIError.unauthenticated("the token is unknown, expired or revoked; log in again")
        }
    }
}
