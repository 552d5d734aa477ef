import Foundation
import Hummingbird
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

    /// The apps' calls that need a session, under `routes`: each reads its envelope and
    /// authenticates its session before its handler runs, and the handler is given both.
    package func routes(_ routes: any RouterMethods<ServiceRequestContext>) -> CallerRoutes<ParticipantCall> {
        CallerRoutes(routes) { request, context in
            let call = try await UserRegCall.read(request, context: context)
            return ParticipantCall(call: call, session: try await authenticate(call))
        }
    }
}

/// A participant's call: its envelope, and the session it was made in.
package struct ParticipantCall: Sendable {
    package let call: UserRegCall
    package let session: SessionStore.Authenticated
}
