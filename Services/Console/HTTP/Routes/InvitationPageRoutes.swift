import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's sites and invitations (`/studies/{studyId}/invitations`), over registration's admin
/// API: the sites with their counts, the invitations with their states (addresses for a study
/// admin), and for a study admin: a new site, one invitation, a CSV of them (refused whole, each
/// bad line named), and resending or revoking one.
package struct InvitationPageRoutes: Sendable {
    let pages: ConsolePages

    /// Invitations shown on the page, newest state first in id order (the API's order).
    static let pageSize = 200

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/invitations", use: show)
        router.post("/studies/:studyId/invitations", use: inviteOne)
        router.post("/studies/:studyId/invitations/import", use: importCSV)
        router.post("/studies/:studyId/invitations/:invitationId/resend") { try await change($0, $1, .resend) }
        router.post("/studies/:studyId/invitations/:invitationId/revoke") { try await change($0, $1, .revoke) }
        router.post("/studies/:studyId/sites", use: createSite)
    }

    /// What the page was asked to show, kept across a refused form.
    struct Filter {
        var state = ""
        var site = ""
        var query: [(String, String)] { [("state", state), ("site", site), ("limit", String(InvitationPageRoutes.pageSize))] }
    }

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let parameters = request.uri.queryParameters
        let filter = Filter(
            state: parameters["state"].map(String.init).flatMap { Invitation.states.contains($0) ? $0 : nil } ?? "",
            site: parameters["site"].map(String.init).flatMap { UUID(uuidString: $0)?.uuidString.lowercased() } ?? "")
        let done = parameters["done"].map(String.init) ?? ""
        return try await pages.signedIn(request, context) { session, _ in
            try await page(studyId, session: session, context: context, filter: filter, notice: Self.notice(done), problems: [], status: .ok)
        }
    }

    static func notice(_ done: String) -> String {
        switch done {
        case "invited": "Invited: the e-mail is on its way."
        case "imported": "Everyone in the file is invited: the e-mails are on their way."
        case "resent": "Sent again, valid for another period."
        case "revoked": "Revoked: the token no longer works."
        case "site": "The site is added."
        default: ""
        }
    }

    @Sendable func inviteOne(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let wanted = InvitationRequest(
                email: FormField.trimmed(form?["email"]), siteId: FormField.trimmed(form?["siteId"]).nilIfEmpty)
            return try await perform(studyId, session: session, context: context, done: "invited") { () async throws(AdminAPIError) in
                _ = try await pages.api.invite(wanted, in: studyId, token: session.token, logger: context.logger)
            }
        }
    }

    @Sendable func importCSV(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let csv = (form ?? FormFields()).text(file: "csvFile", orPasted: "csv")
            guard !csv.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                return try await page(
                    studyId, session: session, context: context, filter: Filter(), notice: "",
                    problems: [.init(pointer: "/csv", message: "Choose a CSV file or paste its lines.")], status: .unprocessableContent)
            }
            return try await perform(studyId, session: session, context: context, done: "imported") { () async throws(AdminAPIError) in
                _ = try await pages.api.importInvitations(csv: csv, in: studyId, token: session.token, logger: context.logger)
            }
        }
    }

    func change(_ request: Request, _ context: ServiceRequestContext, _ action: AdminAPIClient.InvitationChange) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let invitationId = try context.parameters.decoded("invitationId")
        return try await pages.signedIn(request, context) { session, _ in
            try await perform(studyId, session: session, context: context, done: action == .resend ? "resent" : "revoked") {
                () async throws(AdminAPIError) in
                _ = try await pages.api.changeInvitation(invitationId, action, in: studyId, token: session.token, logger: context.logger)
            }
        }
    }

    @Sendable func createSite(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let site = SiteRequest(
                name: FormField.trimmed(form?["name"]), location: FormField.trimmed(form?["location"]).nilIfEmpty,
                targetEnrollment: Int(FormField.trimmed(form?["targetEnrollment"])))
            return try await perform(studyId, session: session, context: context, done: "site") { () async throws(AdminAPIError) in
                _ = try await pages.api.createSite(site, in: studyId, token: session.token, logger: context.logger)
            }
        }
    }

    /// Runs a change; back to the page with its notice, or the page again with what the API
    /// refused (a refused CSV lists every bad line).
    func perform(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, done: String,
        _ call: () async throws(AdminAPIError) -> Void
    ) async throws -> Response {
        if case .failure(let error) = await AdminAPIError.outcome(call) {
            guard [400, 404, 409, 413, 422].contains(error.status) else { throw error }
            let problems = error.problems.isEmpty
                ? [ValidationProblem(pointer: "", message: error.message)]
                : error.problems.map { ValidationProblem(pointer: $0.pointer, message: $0.message) }
            return try await page(
                studyId, session: session, context: context, filter: Filter(), notice: "", problems: problems, status: .unprocessableContent)
        }
        return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/invitations?done=\(done)")
    }

    func page(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, filter: Filter, notice: String,
        problems: [ValidationProblem], status: HTTPResponse.Status
    ) async throws -> Response {
        async let sites = pages.api.sites(of: studyId, token: session.token, logger: context.logger)
        async let invitations = pages.api.invitations(of: studyId, query: filter.query, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let studyAdmin = (state.role ?? .viewer) >= .studyAdmin
        let siteList = try await sites
        let study = siteList.study ?? InvitationCounts()
        let list = try await invitations
        // Who joined is named by their number in the study, as on every page.
        let numbers = try? await AdminAPIError.outcome { () async throws(AdminAPIError) in
            try await pages.api.participantNumbers(
                of: studyId, hashes: list.invitations.compactMap(\.appTokenSHA256), token: session.token, logger: context.logger)
        }.get()
        let view = InvitationsView(
            sites: siteList.sites.map { site in
                let counts = site.counts ?? InvitationCounts()
                return .init(
                    siteId: site.siteId, name: site.name, location: site.location, target: site.targetEnrollment.map { $0.formatted() } ?? "",
                    invited: counts.invited, enrolled: counts.enrolled, withdrawn: counts.withdrawn,
                    revoked: counts.revoked, expired: counts.expired, participants: counts.participants,
                    decommissioned: site.decommissionedAt != nil, selected: site.siteId == filter.site)
            },
            hasSites: !siteList.sites.isEmpty,
            counts: .init(
                invited: study.invited, enrolled: study.enrolled, withdrawn: study.withdrawn,
                revoked: study.revoked, expired: study.expired, participants: study.participants),
            rows: InvitationsView.rows(
                list.invitations.map { invitation in
                    let open = invitation.state == "invited" || invitation.state == "expired"
                    return .init(
                        invitationId: invitation.invitationId, shortId: String(invitation.invitationId.prefix(8)), email: invitation.email ?? "",
                        site: invitation.siteName ?? "", state: StatusNames.invitation(invitation.state), stateClass: "state-\(invitation.state)",
                        expiresAt: StudyPageModels.timestamp(invitation.expiresAt), sent: invitation.sentCount,
                        participantLabel: invitation.participantId == nil ? "" : ParticipantAddress.label(hash: invitation.appTokenSHA256, in: numbers),
                        participantHref: invitation.participantId.map { participantId in
                            ParticipantAddress.path(
                                studyId: studyId, number: invitation.appTokenSHA256.flatMap { numbers?[$0] }, participantId: participantId)
                        } ?? "",
                        hasParticipant: invitation.participantId != nil,
                        otherAddress: invitation.sameEmail == false, actions: studyAdmin && open)
                },
                identities: list.identities, studyAdmin: studyAdmin, studyId: studyId, csrf: session.csrf),
            hasInvitations: !list.invitations.isEmpty, identities: list.identities, more: list.next != nil,
            states: Invitation.states.map { .init(value: $0, label: StatusNames.invitation($0), selected: $0 == filter.state) }, studyAdmin: studyAdmin, notice: notice,
            hasNotice: !notice.isEmpty, problemReport: ProblemReport(heading: "Nothing was changed", problems))
        return pages.render(view, title: "Invitations · \(state.summary.name)", session: session, state: state, current: "invitations", status: status)
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// `invitations.mustache`: the study's sites with their counts, its invitations, and the forms
/// that invite people and add sites.
struct InvitationsView: PageView {
    static let template = "invitations"

    struct Counts {
        var invited: Int
        var enrolled: Int
        var withdrawn: Int
        var revoked: Int
        var expired: Int
        var participants: Int
    }

    struct Site {
        var siteId: String
        var name: String
        var location: String
        var target: String
        var invited: Int
        var enrolled: Int
        var withdrawn: Int
        var revoked: Int
        var expired: Int
        var participants: Int
        var decommissioned: Bool
        /// The site the list is filtered to.
        var selected: Bool
    }

    struct Row {
        var invitationId: String
        var shortId: String
        var email: String
        var site: String
        var state: String
        var stateClass: String
        var expiresAt: String
        var sent: Int
        /// Who joined with it: "Participant N" (`ParticipantAddress`), and their page.
        var participantLabel: String
        var participantHref: String
        var hasParticipant: Bool
        /// The participant joined with an address other than the one invited.
        var otherAddress: Bool
        /// Resend and revoke are offered.
        var actions: Bool
    }

    var sites: [Site]
    var hasSites: Bool
    /// The whole study's counts.
    var counts: Counts
    /// The invitations' rows (`rows(_:identities:studyAdmin:studyId:csrf:)`).
    var rows: SafeHTML
    var hasInvitations: Bool
    /// E-mail addresses are shown (study admins).
    var identities: Bool
    /// The list was cut at its page size.
    var more: Bool
    var states: [OptionChoice]
    var studyAdmin: Bool
    var notice: String
    var hasNotice: Bool
    var problemReport: ProblemReport?
}

extension InvitationsView {
    /// The list's rows, written here rather than by the template: up to 200 rows of eight cells
    /// and two forms, and drawing them name by name through Mustache's reflection took over half
    /// of the page's time in the console. The markup is what the template drew, each value escaped
    /// by `MarkupWriter`.
    static func rows(_ rows: [Row], identities: Bool, studyAdmin: Bool, studyId: String, csrf: String) -> SafeHTML {
        var html = MarkupWriter(capacity: rows.count * (studyAdmin ? 900 : 400))
        for row in rows {
            html.out += "      "
            html.open("tr", [("data-invitation", row.invitationId)])
            html.open("td")
            html.open("code")
            html.text(row.shortId)
            html.close("code", newline: false)
            html.close("td", newline: false)
            if identities { cell(&html, row.email) }
            cell(&html, row.site)
            html.out += "\n        "
            html.open("td")
            html.open("span", [("class", "status \(row.stateClass)")])
            html.text(row.state)
            html.close("span", newline: false)
            html.close("td", newline: false)
            cell(&html, row.expiresAt)
            cell(&html, String(row.sent), class: "number")
            html.out += "\n        "
            html.open("td")
            if row.hasParticipant {
                html.open("a", [("href", row.participantHref)])
                html.text(row.participantLabel)
                html.close("a", newline: false)
                if row.otherAddress { html.out += #" <span class="status">other address</span>"# }
            }
            html.close("td", newline: false)
            html.out += "\n        "
            if studyAdmin {
                html.open("td")
                if row.actions {
                    for (action, label, buttonClass) in [("resend", "Resend", "small"), ("revoke", "Revoke", "small remove")] {
                        html.out += "\n          "
                        html.open("form", [("method", "post"), ("action", "/studies/\(studyId)/invitations/\(row.invitationId)/\(action)"), ("class", "inline")])
                        html.open("input", [("type", "hidden"), ("name", "csrf"), ("value", csrf)])
                        html.open("button", [("type", "submit"), ("class", buttonClass)])
                        html.text(label)
                        html.close("button", newline: false)
                        html.close("form", newline: false)
                    }
                    html.out += "\n        "
                }
                html.close("td", newline: false)
            }
            html.close("tr")
        }
        return html.html
    }

    private static func cell(_ html: inout MarkupWriter, _ value: String, class name: String? = nil) {
        html.open("td", [("class", name)])
        html.text(value)
        html.close("td", newline: false)
    }
}
