import ConsoleCore
import Foundation
import Hummingbird

/// The console's two cookies, both sealed and `HttpOnly`, `SameSite=Strict`, `Secure` over https:
/// the session (the admin's token), and before it the sign-in form's token, so a sign-in cannot
/// be submitted from another site either.
package struct SessionCookies: Sendable {
    let sealer: SessionSealer
    let secure: Bool
    let duration: Duration

    package init(sealer: SessionSealer, secure: Bool, duration: Duration) {
        self.sealer = sealer
        self.secure = secure
        self.duration = duration
    }

    /// Over https the `__Host-` prefix also binds the cookie to this host and path `/`.
    var sessionName: String { secure ? "__Host-studystack_session" : "studystack_session" }
    var signInName: String { secure ? "__Host-studystack_signin" : "studystack_signin" }

    /// The signed-in session the request carries, if it carries a valid, unexpired one.
    package func session(_ request: Request) -> ConsoleSession? {
        guard let value = request.cookies[sessionName]?.value else { return nil }
        return sealer.open(value)
    }

    /// The sign-in form's token the request carries (a sealed session without an admin).
    package func signInForm(_ request: Request) -> ConsoleSession? {
        guard let value = request.cookies[signInName]?.value, let form = sealer.open(value), form.token.isEmpty else { return nil }
        return form
    }

    /// A new sign-in form token, good for an hour.
    package func newSignInForm() -> ConsoleSession {
        ConsoleSession(token: "", email: "", expiresAt: Date().addingTimeInterval(3600))
    }

    /// A session for `token`, ending with the token or the console's limit, whichever is first.
    package func newSession(token: String, email: String, tokenExpiresAt: Date) -> ConsoleSession {
        let limit = Date().addingTimeInterval(TimeInterval(duration.components.seconds))
        return ConsoleSession(token: token, email: email, expiresAt: min(limit, tokenExpiresAt))
    }

    package func set(_ session: ConsoleSession, on response: inout Response) throws {
        let name = session.token.isEmpty ? signInName : sessionName
        let maxAge = max(0, Int(session.expiresAt.timeIntervalSinceNow))
        response.setCookie(
            Cookie(name: name, value: try sealer.seal(session), maxAge: maxAge, path: "/", secure: secure, httpOnly: true, sameSite: .strict))
    }

    /// Removes the session cookie (and the sign-in form's).
    package func clear(on response: inout Response) {
        expire(sessionName, on: &response)
        expire(signInName, on: &response)
    }

    /// Sets the new session and removes the sign-in form's cookie, which has served.
    package func signedIn(_ session: ConsoleSession, on response: inout Response) throws {
        expire(signInName, on: &response)
        try set(session, on: &response)
    }

    func expire(_ name: String, on response: inout Response) {
        response.setCookie(Cookie(name: name, value: "", maxAge: 0, path: "/", secure: secure, httpOnly: true, sameSite: .strict))
    }
}
