import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// A study's messages (`/studies/{studyId}/messages`): who a message sent now reaches, counted
/// by the registration service before anything is sent; the form that sends one (study admin,
/// active study); and every notification of the study, planned, lifecycle and sent by hand.
package struct MessageRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/messages", use: show)
        router.post("/studies/:studyId/messages", use: send)
    }

    static let title = FormField("/title", "Title (the study's name when left empty)", .localized(long: false))
    static let text = FormField("/text", "Message", .localized(long: true))

    @Sendable func show(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        let sent = request.uri.queryParameters["sent"] != nil
        return try await pages.signedIn(request, context) { session, _ in
            try await messagesPage(studyId, session: session, context: context, form: FormFields(), problems: [], sent: sent, status: .ok)
        }
    }

    @Sendable func send(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            let decode = { (field: FormField) -> LocalizedText? in
                field.value(from: form).flatMap { try? JSONDecoder().decode(LocalizedText.self, from: Data($0.serialized().utf8)) }
            }
            guard let text = decode(Self.text) else {
                return try await messagesPage(
                    studyId, session: session, context: context, form: form,
                    problems: [.init(pointer: "/text", message: "write the message in English")], sent: false, status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome { () async throws(AdminAPIError) in
                try await pages.api.sendMessage(
                    StudyMessage(title: decode(Self.title), text: text), to: studyId, token: session.token, logger: context.logger)
            }
            if case .failure(let error) = outcome {
                guard [400, 409, 422].contains(error.status) else { throw error }
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return try await messagesPage(
                    studyId, session: session, context: context, form: form, problems: problems, sent: false, status: .unprocessableContent)
            }
            return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/messages?sent=1")
        }
    }

    /// What a kind of notification is, in words.
    static func origin(_ origin: AppNotificationRecord.Origin) -> String {
        switch origin {
        case .study: "Planned in the study"
        case .lifecycle: "The study's status changed"
        case .announcement: "Announcement to the app"
        case .message: "Message from the team"
        }
    }

    func messagesPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, form: FormFields, problems: [ValidationProblem],
        sent: Bool, status: HTTPResponse.Status
    ) async throws -> Response {
        async let audience = pages.api.audience(of: studyId, token: session.token, logger: context.logger)
        async let notifications = pages.api.notifications(ofStudy: studyId, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let active = [.active, .testing].contains(state.summary.status)
        let counted = try await audience
        let participants = counted.participants == 1 ? "1 participant" : "\(counted.participants.formatted()) participants"
        let rows = try await notifications.map { record in
            MessagesView.Notification(
                kind: Self.origin(record.origin), title: record.title?.text(for: "en") ?? "", message: record.message.text(for: "en"),
                dueAt: StudyPageModels.timestamp(record.dueAt), sentAt: record.sentAt.map(StudyPageModels.timestamp) ?? "not yet")
        }
        let view = MessagesView(
            active: active, statusLabel: StudyPageModels.statusLabel(state.summary.status), participants: participants,
            devices: counted.devices == 1 ? "1 device" : "\(counted.devices.formatted()) devices", nobody: counted.participants == 0,
            maySend: active && state.role == .studyAdmin && counted.participants > 0, notStudyAdmin: active && state.role != .studyAdmin,
            confirm: "Send this message to \(participants) now? It cannot be called back.", sent: sent, notifications: rows,
            hasNotifications: !rows.isEmpty,
            form: FormHTML.render(
                [Self.title, Self.text].map {
                    ElementView.make(.field($0), at: .init(tokens: []), values: form, problems: problems, spanish: state.spanish, readOnly: false)
                },
                studyId: nil),
            problemReport: ProblemReport(heading: "Not sent", problems))
        return pages.render(view, title: "Messages · \(state.summary.name)", session: session, state: state, current: "messages", status: status)
    }
}

/// `messages.mustache`: a message to the study's participants, who it reaches, and what the
/// study has sent.
struct MessagesView: PageView {
    static let template = "messages"

    struct Notification {
        var kind: String
        var title: String
        var message: String
        var dueAt: String
        var sentAt: String
    }

    /// The study is active or in testing: messages can be sent.
    var active: Bool
    var statusLabel: String
    /// Who a message reaches, in words.
    var participants: String
    var devices: String
    var nobody: Bool
    var maySend: Bool
    var notStudyAdmin: Bool
    /// The question asked before sending.
    var confirm: String
    var sent: Bool
    var notifications: [Notification]
    var hasNotifications: Bool
    var form: SafeHTML
    var problemReport: ProblemReport?
}
