import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

/// `GET|POST /apps/{appId}/announcements`: every notification of an app (study, lifecycle and
/// announcements, with when each is due and when it went out), and an announcement to every user
/// of the app, now or at a time (super-admin).
package struct AnnouncementRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/apps/:appId/announcements", use: page)
        router.post("/apps/:appId/announcements", use: announce)
    }

    @Sendable func page(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, _ in
            try await announcementsPage(appId, session: session, context: context, form: FormFields(), problems: [], status: .ok)
        }
    }

    static let text = FormField("/text", "Text", .localized(long: true))
    static let title = FormField("/title", "Title (the app's name when left empty)", .localized(long: false))

    @Sendable func announce(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let appId = try context.parameters.decoded("appId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let at = FormField.trimmed(form["at"])
            let text = Self.text.value(from: form).flatMap { try? JSONDecoder().decode(LocalizedText.self, from: Data($0.serialized().utf8)) }
            let title = Self.title.value(from: form).flatMap { try? JSONDecoder().decode(LocalizedText.self, from: Data($0.serialized().utf8)) }
            guard let text else {
                return try await announcementsPage(
                    appId, session: session, context: context, form: form, problems: [.init(pointer: "/text", message: "needs an English text")],
                    status: .unprocessableContent)
            }
            // The form asks for a time in UTC; the admin API takes an instant with its offset.
            let announcement = AppAnnouncement(notificationId: nil, title: title, text: text, at: at.isEmpty ? nil : at + ":00Z")
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in
                try await pages.api.announce(announcement, in: appId, token: session.token, logger: context.logger)
            }
            if case .failure(let error) = outcome {
                guard [400, 409, 422].contains(error.status) else { throw error }
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return try await announcementsPage(appId, session: session, context: context, form: form, problems: problems, status: .unprocessableContent)
            }
            return PageRenderer.redirect(to: "/apps/\(AdminAPIClient.segment(appId))/announcements")
        }
    }

    func announcementsPage(
        _ appId: String, session: ConsoleSession, context: ServiceRequestContext, form: FormFields, problems: [ValidationProblem],
        status: HTTPResponse.Status
    ) async throws -> Response {
        let records = try await pages.api.notifications(of: appId, token: session.token, logger: context.logger)
        let view = AnnouncementsView(
            appId: appId,
            notifications: records.sorted { $0.dueAt > $1.dueAt }.map { record in
                .init(
                    notificationId: record.notificationId, origin: record.origin.rawValue, study: record.studyId ?? "",
                    title: record.title?.text(for: "en") ?? "", message: record.message.text(for: "en"),
                    dueAt: StudyPageModels.timestamp(record.dueAt), sentAt: record.sentAt.map(StudyPageModels.timestamp) ?? "not yet")
            },
            hasNotifications: !records.isEmpty,
            form: FormHTML.render(
                [Self.title, Self.text].map {
                    ElementView.make(.field($0), at: .init(tokens: []), values: form, problems: problems, spanish: true, readOnly: false)
                },
                studyId: nil),
            at: form["at"] ?? "", problemReport: ProblemReport(heading: "Not sent", problems))
        return pages.render(view, title: "Notifications · \(appId)", session: session, status: status)
    }
}

/// `announcements.mustache`: an app's notifications, and the form for an announcement.
struct AnnouncementsView: PageView {
    static let template = "announcements"

    struct Notification {
        var notificationId: String
        var origin: String
        var study: String
        var title: String
        var message: String
        var dueAt: String
        var sentAt: String
    }

    var appId: String
    var notifications: [Notification]
    var hasNotifications: Bool
    var form: SafeHTML
    /// The time typed into the form (UTC).
    var at: String
    var problemReport: ProblemReport?
}
