import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

/// Admin accounts: `/admins` (super-admins list accounts and invite admins; the invitation code
/// is shown once) and `/invitation` (an invitee sets a password with the code, before having a
/// session).
package struct AdminAccountPageRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/admins", use: admins)
        router.post("/admins", use: invite)
        router.get("/invitation", use: invitationForm)
        router.post("/invitation", use: acceptInvitation)
    }

    @Sendable func admins(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, _ in
            try await adminsPage(session, context: context, invited: nil, problems: [], email: "", status: .ok)
        }
    }

    @Sendable func invite(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try await pages.signedIn(request, context) { session, form in
            let email = FormField.trimmed(form?["email"])
            let role = form?["role"].flatMap(AdminRole.init(rawValue:)) ?? .admin
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in
                try await pages.api.invite(AdminInvite(email: email, role: role), token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success(let invited):
                return try await adminsPage(session, context: context, invited: invited, problems: [], email: "", status: .created)
            case .failure(let error) where [400, 409, 422].contains(error.status):
                return try await adminsPage(
                    session, context: context, invited: nil, problems: [.init(pointer: "/email", message: error.message)], email: email,
                    status: .unprocessableContent)
            case .failure(let error):
                throw error
            }
        }
    }

    func adminsPage(
        _ session: ConsoleSession, context: ServiceRequestContext, invited: AdminInvited?, problems: [ValidationProblem], email: String,
        status: HTTPResponse.Status
    ) async throws -> Response {
        let accounts = try await pages.api.admins(token: session.token, logger: context.logger)
        let view = AdminsView(
            admins: accounts.map { account in
                .init(
                    email: account.email, role: account.role == .superAdmin ? "super-admin" : "admin", state: account.active ? "active" : "invited",
                    studies: account.studyRoles.sorted { $0.key < $1.key }.map { "\($0.key) (\(StudyPageModels.roleLabel($0.value)))" }
                        .joined(separator: ", "))
            },
            email: email,
            invited: invited.map {
                .init(
                    email: $0.email, code: $0.invitation.token, expiresAt: StudyPageModels.timestamp($0.invitation.expiresAt),
                    address: pages.publicURL.appendingPathComponent("invitation").absoluteString)
            },
            problemReport: ProblemReport(
                heading: "Not invited",
                problems.map { problem in
                    var item = ProblemItem(problem)
                    item.href = "#email"
                    item.label = "E-mail"
                    return item
                }))
        return pages.render(view, title: "Admins", session: session, status: status)
    }

    // MARK: Accepting an invitation

    @Sendable func invitationForm(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        try invitationPage(message: nil, status: .ok)
    }

    @Sendable func acceptInvitation(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let form = try await ConsolePages.form(request, context)
        guard let formToken = pages.cookies.signInForm(request), formToken.acceptsForm(token: form["csrf"]) else {
            return try invitationPage(message: "The form had expired or did not come from this console. Try again.", status: .forbidden)
        }
        let code = FormField.trimmed(form["code"])
        let password = form["password"] ?? ""
        guard !code.isEmpty, !password.isEmpty else {
            return try invitationPage(message: "Enter the invitation code and a password.", status: .unprocessableContent)
        }
        guard password == form["again"] else {
            return try invitationPage(message: "The two passwords differ.", status: .unprocessableContent)
        }
        let outcome = await AdminAPIError.outcome {
            () async throws(AdminAPIError) in
            try await pages.api.acceptInvitation(
                AdminInvitationAcceptance(token: code, password: password), forwardedFor: ConsolePages.forwardedFor(request, context),
                logger: context.logger)
        }
        if case .failure(let error) = outcome {
            // The password policy (400) or an unknown, used or expired code (410).
            return try invitationPage(message: error.message, status: error.status == 410 ? .gone : .unprocessableContent)
        }
        var response = PageRenderer.redirect(to: "/signin?ready=1")
        pages.cookies.clear(on: &response)
        return response
    }

    func invitationPage(message: String?, status: HTTPResponse.Status) throws -> Response {
        let formToken = pages.cookies.newSignInForm()
        var response = pages.renderer.page(
            Page(
                layout: PageLayout(title: "Accept an invitation", user: nil, csrf: formToken.csrf), menu: nil,
                body: AdminInvitationView(message: message)),
            status: status)
        try pages.cookies.set(formToken, on: &response)
        return response
    }
}

/// `admins.mustache`: the console's admins, and the form that invites one.
struct AdminsView: PageView {
    static let template = "admins"

    struct Admin {
        var email: String
        var role: String
        var state: String
        /// Their roles on studies, in words.
        var studies: String
    }

    /// The invitation just made: its code, shown once, and where to use it.
    struct Invited {
        var email: String
        var code: String
        var expiresAt: String
        var address: String
    }

    var admins: [Admin]
    /// The address typed into the form.
    var email: String
    var invited: Invited?
    var problemReport: ProblemReport?
}

/// `invitation.mustache`: an invited admin chooses a password.
struct AdminInvitationView: PageView {
    static let template = "invitation"
    /// Why the last try failed.
    var message: String?
}
