import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's team (`/studies/{studyId}/team`: who holds which role; study admins grant and remove
/// roles) and its audit log (`/studies/{studyId}/audit`). Both are the study admin's; the admin
/// API refuses anyone else.
package struct TeamRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/team", use: team)
        router.post("/studies/:studyId/team", use: grant)
        router.post("/studies/:studyId/team/remove", use: remove)
        router.get("/studies/:studyId/audit", use: audit)
    }

    @Sendable func team(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            try await teamPage(studyId, session: session, context: context, problems: [], email: "", status: .ok)
        }
    }

    @Sendable func grant(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let email = FormField.trimmed(form?["email"])
            guard let role = form?["role"].flatMap(StudyRole.init(rawValue:)), !email.isEmpty else {
                return try await teamPage(
                    studyId, session: session, context: context, problems: [.init(pointer: "", message: "Enter an e-mail and choose a role.")],
                    email: email, status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in
                try await pages.api.grant(StudyTeamGrant(email: email, role: role), on: studyId, token: session.token, logger: context.logger)
            }
            if case .failure(let error) = outcome {
                guard [400, 404, 422].contains(error.status) else { throw error }
                return try await teamPage(
                    studyId, session: session, context: context, problems: [.init(pointer: "", message: error.message)], email: email,
                    status: .unprocessableContent)
            }
            return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/team")
        }
    }

    @Sendable func remove(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            guard let adminId = form?["adminId"].flatMap(UUID.init(uuidString:)) else {
                return try await teamPage(
                    studyId, session: session, context: context, problems: [.init(pointer: "", message: "No such member.")], email: "",
                    status: .unprocessableContent)
            }
            try await pages.api.revoke(adminId, on: studyId, token: session.token, logger: context.logger)
            return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/team")
        }
    }

    func teamPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, problems: [ValidationProblem], email: String,
        status: HTTPResponse.Status
    ) async throws -> Response {
        async let members = pages.api.team(of: studyId, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let rows = try await members.map { member in
            TeamView.Member(adminId: member.adminId.uuidString, email: member.email, role: StudyPageModels.roleLabel(member.role))
        }
        let view = TeamView(members: rows, email: email, problemReport: ProblemReport(heading: "Not changed", problems))
        return pages.render(view, title: "Team · \(state.summary.name)", session: session, state: state, current: "team", status: status)
    }

    @Sendable func audit(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            async let events = pages.api.audit(of: studyId, limit: 500, token: session.token, logger: context.logger)
            let state = try await pages.load(studyId, session: session, context: context)
            let rows = try await events.map { event in
                AuditView.Event(
                    at: StudyPageModels.timestamp(event.at), actor: event.actor, action: event.action, what: AuditWords.action(event.action),
                    version: event.studyVersion.map { "1.\($0 - 1)" } ?? "", details: AuditWords.details(event.details))
            }
            return pages.render(
                AuditView(events: rows, hasEvents: !rows.isEmpty), title: "Audit log · \(state.summary.name)", session: session, state: state,
                current: "audit")
        }
    }
}

/// `team.mustache`: who holds a role on the study.
struct TeamView: PageView {
    static let template = "team"

    struct Member {
        var adminId: String
        var email: String
        var role: String
    }

    var members: [Member]
    /// The address typed into the form, kept when it was refused.
    var email: String
    var problemReport: ProblemReport?
}

/// `audit.mustache`: the study's audit log, newest first.
struct AuditView: PageView {
    static let template = "audit"

    struct Event {
        var at: String
        var actor: String
        /// As recorded (kept on the row for scripts).
        var action: String
        /// In words.
        var what: String
        var version: String
        var details: String
    }

    var events: [Event]
    var hasEvents: Bool
}
