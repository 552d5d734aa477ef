import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyModels

/// Resolves `Authorization: Bearer <token>` to an admin. Handlers call it first, so no admin
/// route can forget authentication, and then check the role they need.
package struct AdminTokenAuthenticator: Sendable {
    package let store: AdminStore

    package init(store: AdminStore) {
        self.store = store
    }

    package func authenticate(_ request: Request) async throws -> AuthenticatedAdmin {
        guard let token = request.bearerToken else {
            throw APIError.unauthenticated("send Authorization: Bearer <token> from POST /admin/v1/login")
        }
        guard let admin = try await store.authenticated(tokenHash: SecureToken.hash(token)) else {
            throw APIError.unauthenticated("the token is unknown, expired or revoked; log in again")
        }
        return admin
    }

    /// Only super-admins.
    package func requireSuperAdmin(_ request: Request) async throws -> AuthenticatedAdmin {
        let admin = try await authenticate(request)
        guard admin.role == .superAdmin else { throw StudyMetadataError.superAdminRequired }
        return admin
    }

    /// Admins holding at least `role` on `studyId`.
    package func require(_ role: StudyRole, on studyId: String, _ request: Request) async throws -> AuthenticatedAdmin {
        let admin = try await authenticate(request)
        guard admin.may(role, on: studyId) else {
            throw StudyMetadataError.roleRequired(role, studyId: studyId)
        }
        return admin
    }
}
