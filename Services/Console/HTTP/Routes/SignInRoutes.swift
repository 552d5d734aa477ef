import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

/// `GET|POST /signin` and `POST /signout`. Signing in asks study-metadata's `/admin/v1/login`
/// (its rate limits, lockout and audit apply, counted per browser address); the token goes into
/// the sealed session cookie and nowhere else. Signing out revokes the token at study-metadata.
package struct SignInRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/signin", use: form)
        router.post("/signin", use: signIn)
        router.post("/signout", use: signOut)
    }

    @Sendable func form(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        if pages.cookies.session(request) != nil { return PageRenderer.redirect(to: "/") }
        let notice =
            request.uri.queryParameters["ended"] != nil
            ? "Your session ended. Sign in again."
            : request.uri.queryParameters["ready"] != nil ? "Your account is ready. Sign in with your e-mail and new password." : nil
        return try page(next: request.uri.queryParameters["next"].map(String.init), email: "", message: nil, notice: notice, status: .ok)
    }

    @Sendable func signIn(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let form = try await ConsolePages.form(request, context)
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces)
        let next = ConsolePages.safeNext(form["next"])
        guard let formToken = pages.cookies.signInForm(request), formToken.acceptsForm(token: form["csrf"]) else {
            return try page(
                next: next, email: email, message: "The sign-in form had expired or did not come from this console. Try again.",
                notice: nil, status: .forbidden)
        }
        guard !email.isEmpty, let password = form["password"], !password.isEmpty else {
            return try page(next: next, email: email, message: "Enter your e-mail and password.", notice: nil, status: .unprocessableContent)
        }
        let outcome = await AdminAPIError.outcome {
            () async throws(AdminAPIError) in
            try await pages.api.signIn(
                email: email, password: password, forwardedFor: ConsolePages.forwardedFor(request, context), logger: context.logger)
        }
        let signedIn: AdminSignedIn
        switch outcome {
        case .success(let reply):
            signedIn = reply
        case .failure(let error):
            // study-metadata's message: wrong e-mail or password, locked, or too many tries.
            let status: HTTPResponse.Status =
                switch error.status {
                case 429: .tooManyRequests
                case nil: .badGateway
                default: .unauthorized
                }
            return try page(next: next, email: email, message: error.message, notice: nil, status: status)
        }
        let session = pages.cookies.newSession(token: signedIn.token, email: signedIn.admin.email, tokenExpiresAt: signedIn.expiresAt)
        var response = PageRenderer.redirect(to: next)
        try pages.cookies.signedIn(session, on: &response)
        return response
    }

    @Sendable func signOut(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, _ in
            // A token study-metadata no longer knows is as good as revoked.
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in try await pages.api.signOut(token: session.token, logger: context.logger)
            }
            if case .failure(let error) = outcome, error.status != 401 { throw error }
            var response = PageRenderer.redirect(to: "/signin")
            pages.cookies.clear(on: &response)
            return response
        }
    }

    /// The form, with a fresh form token in its own cookie.
    func page(next: String?, email: String, message: String?, notice: String?, status: HTTPResponse.Status) throws -> Response {
        let formToken = pages.cookies.newSignInForm()
        let view = SignInView(next: ConsolePages.safeNext(next), email: email, message: message, notice: notice)
        var response = pages.renderer.page(
            Page(layout: PageLayout(title: "Sign in", user: nil, csrf: formToken.csrf), menu: nil, body: view), status: status)
        try pages.cookies.set(formToken, on: &response)
        return response
    }
}

/// `signin.mustache`.
package struct SignInView: PageView {
    package static let template = "signin"
    /// Where to go after signing in (a path of the console).
    var next: String
    var email: String
    /// Why the last try failed.
    var message: String?
    var notice: String?

    package init(next: String, email: String, message: String?, notice: String?) {
        self.next = next
        self.email = email
        self.message = message
        self.notice = notice
    }
}
