import AdminAuthHTTP
import Foundation
import Hummingbird
import Logging
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// Resolves `Authorization: Bearer <token>` to an admin from study-metadata's own sessions. The
/// admin routes are mounted through it (`AdminRouter`), so no admin route can forget
/// authentication or the role its definition names.
package struct AdminTokenAuthenticator: AdminAuthenticating {
    package let store: AdminStore

    package init(store: AdminStore) {
        self.store = store
    }

    /// `logger` is unused: the sessions are this service's own (`AdminAuthenticating` asks for it
    /// for the services that ask study-metadata).
    package func authenticate(_ request: Request, logger: Logger) async throws -> AuthenticatedAdmin {
        guard let token = request.bearerToken else {
            throw APIError.unauthenticated("send Authorization: Bearer <token> from POST /admin/v1/login")
        }
        guard let admin = try await store.authenticated(tokenHash: SecureToken.hash(token)) else {
            throw APIError.unauthenticated("the token is unknown, expired or revoked; log in again")
        }
        return admin
    }
}
