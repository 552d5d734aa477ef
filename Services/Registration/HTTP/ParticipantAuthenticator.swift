import Foundation
import RegistrationCore
import ServiceKit
import ServiceKitHTTP

/// Resolves the `auth` header to a session and checks that it belongs to the `userId` the call
/// names and to the app and organisation in its headers. An unknown or expired key is 401 (the
/// apps then refresh); a key used for someone else's account, or another app, is 403.
package struct ParticipantAuthenticator: Sendable {
    package let sessions: SessionStore

    package init(sessions: SessionStore) {
        self.sessions = sessions
    }

    package func authenticate(_ call: UserRegCall) async throws -> SessionStore.Authenticated {
        guard let auth = call.header("auth"), let session = try await sessions.authenticate(auth: auth) else {
            throw RegistrationError.sessionExpired
        }
        guard session.appId == call.appId, session.orgId == call.orgId else { throw RegistrationError.notYourSession }
        if let named = call.header("userId") ?? call.string("userId") {
            guard UUID(uuidString: named) == session.userId else { throw RegistrationError.notYourSession }
        }
        return session
    }
}
