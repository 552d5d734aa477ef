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
///
/// A console page asks a service several things at once with one token. Those checks are shared
/// (`SharedQuestions`): a request that arrives while its token is being checked waits for the next
/// check, made once for all who came meanwhile, never for the one already under way, so each
/// request's check still begins after it arrived.
public struct RemoteAdminAuthenticator: AdminAuthenticating {
    public let client: InternalClient
    private let checks: SharedQuestions<String, InternalAnswer<AdminIdentity>>

    public init(client: InternalClient) {
        self.client = client
        checks = SharedQuestions { tokenHash, logger in
            try await client.call(InternalCalls.adminSessions, body: AdminSessionQuery(tokenHash: tokenHash), logger: logger)
        }
    }

    public func authenticate(_ request: Request, logger: Logger) async throws -> AdminIdentity {
        guard let token = request.bearerToken else {
            throw APIError.unauthenticated("send Authorization: Bearer <token> from study-metadata's POST /admin/v1/login")
        }
        let answer: InternalAnswer<AdminIdentity>
        do {
            answer = try await checks.answer(SecureToken.hash(token), logger: logger)
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
