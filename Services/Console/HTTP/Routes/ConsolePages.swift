import ConsoleCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `error.mustache`: what went wrong, in words.
struct ErrorView: PageView {
    static let template = "error"
    var heading: String
    var message: String
}

/// What every console route shares: the admin API client, the templates, the cookies, and the
/// rules every page follows. A page needs a signed-in session (otherwise it sends the browser to
/// sign in); a POST needs the session's form token; an admin API answer that ends the session
/// (the token was revoked or expired) signs the browser out.
package struct ConsolePages: Sendable {
    package let api: AdminAPIClient
    package let renderer: PageRenderer
    package let cookies: SessionCookies
    /// Where admins open the console (the address an invitation names).
    package let publicURL: URL
    /// The section forms drawn last, by draft version.
    let sectionForms = SectionFormCache()

    package init(api: AdminAPIClient, renderer: PageRenderer, cookies: SessionCookies, publicURL: URL) {
        self.api = api
        self.renderer = renderer
        self.cookies = cookies
        self.publicURL = publicURL
    }

    /// A signed-in page. For a POST, `body` receives the submitted form, already checked to
    /// carry this session's form token.
    func signedIn(
        _ request: Request, _ context: ServiceRequestContext,
        _ body: (ConsoleSession, FormFields?) async throws -> Response
    ) async throws -> Response {
        guard let session = cookies.session(request) else {
            var response = PageRenderer.redirect(to: "/signin?next=" + Self.nextParameter(request))
            if request.cookies[cookies.sessionName] != nil { cookies.clear(on: &response) }
            return response
        }
        var form: FormFields?
        if request.method == .post {
            let submitted = try await Self.form(request, context)
            guard session.acceptsForm(token: submitted["csrf"]) else {
                context.logger.notice("console form refused: missing or wrong form token", metadata: ["path": "\(request.uri.path)"])
                return errorPage(
                    session, status: .forbidden, heading: "This form cannot be accepted",
                    message: "It did not come from a page of this session, or the session changed since it was opened. Go back, reload the page and try again.")
            }
            form = submitted
        }
        do {
            return try await body(session, form)
        } catch let error as AdminAPIError where error.endsSession {
            var response = PageRenderer.redirect(to: "/signin?ended=1")
            cookies.clear(on: &response)
            return response
        } catch let error as AdminAPIError {
            return apiErrorPage(error, session: session)
        }
    }

    /// The page for an admin API refusal that the page itself does not handle.
    func apiErrorPage(_ error: AdminAPIError, session: ConsoleSession?) -> Response {
        switch error.status {
        case 403: errorPage(session, status: .forbidden, heading: "Not allowed", message: error.message)
        case 404: errorPage(session, status: .notFound, heading: "Not found", message: error.message)
        case nil:
            errorPage(
                session, status: .badGateway, heading: error.service.map { "The \($0) service is not answering" } ?? "A service is not answering",
                message: error.message)
        case let status?:
            errorPage(session, status: HTTPResponse.Status(code: status >= 500 ? 502 : status), heading: "That did not work", message: error.message)
        }
    }

    /// The page for an error a route or the server threw (a form that cannot be read, no such
    /// page, a method the page does not take).
    package func errorPage(for error: APIError) -> Response {
        let heading =
            switch error.status.code {
            case 404: "Not found"
            case 500...: "Something went wrong"
            default: "That request cannot be handled"
            }
        var response = errorPage(nil, status: error.status, heading: heading, message: error.message)
        for field in error.headers { response.headers.append(field) }
        return response
    }

    func errorPage(_ session: ConsoleSession?, status: HTTPResponse.Status, heading: String, message: String) -> Response {
        render(ErrorView(heading: heading, message: message), title: heading, session: session, status: status)
    }

    /// The submitted form of a POST (`application/x-www-form-urlencoded`, or `multipart/form-data`
    /// from a form with a file), within the body limit.
    static func form(_ request: Request, _ context: ServiceRequestContext) async throws -> FormFields {
        let contentType = request.headers[.contentType] ?? ""
        let type = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        let boundary = FormFields.multipartBoundary(contentType: contentType)
        guard type == "application/x-www-form-urlencoded" || boundary != nil else {
            throw APIError(
                .unsupportedMediaType, code: "unsupported_media_type",
                message: "console forms are sent as application/x-www-form-urlencoded, or multipart/form-data with a boundary")
        }
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        do {
            if let boundary { return try FormFields(multipart: body.readableBytesView, boundary: boundary) }
            return try FormFields(urlencoded: body.readableBytesView)
        } catch .tooManyFields {
            throw APIError.badRequest("the form has more than \(FormFields.maxFields) fields")
        } catch .notText {
            throw APIError.badRequest("the form is not UTF-8 text")
        } catch .fileNotText(let field) {
            throw APIError.badRequest("the file chosen for \(field) is not a text file (UTF-8); choose the JSON or key file itself")
        } catch .malformed(let problem) {
            throw APIError.badRequest("the form cannot be read: \(problem)")
        }
    }

    /// Where to come back after signing in: this path, when it is one of the console's own.
    static func nextParameter(_ request: Request) -> String {
        (request.method == .get ? request.uri.path : "/").addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "/"
    }

    /// A `next` value is followed only when it is a path of this console (`/…`, not `//host` nor
    /// `/\\host`, which browsers read as a host). Read scalar by scalar: printable ASCII only, so no
    /// combining mark can hide a second slash from the test and no tab or newline can be stripped
    /// by the browser to make one.
    package static func safeNext(_ next: String?) -> String {
        guard let next else { return "/" }
        let scalars = Array(next.unicodeScalars)
        guard scalars.first == "/", scalars.count < 2 || (scalars[1] != "/" && scalars[1] != "\\"), !scalars.contains("\\"),
            scalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else { return "/" }
        return next
    }

    /// The browser's address chain as study-metadata should count it: what a proxy in front of
    /// the console said, then the address the console saw.
    static func forwardedFor(_ request: Request, _ context: ServiceRequestContext) -> String? {
        let earlier = request.headers[values: .xForwardedFor].joined(separator: ", ")
        guard let peer = context.remoteAddress else { return earlier.isEmpty ? nil : earlier }
        return earlier.isEmpty ? peer : earlier + ", " + peer
    }
}
