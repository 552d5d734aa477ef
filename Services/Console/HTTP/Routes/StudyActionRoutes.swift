import ConsoleCore
import Foundation
import Hummingbird
import ServiceKitHTTP
import StudyModels

/// `GET|POST /studies/{studyId}/actions`: the lifecycle actions the study's status allows, each
/// explained before the click, and the versions frozen so far. The admin API decides: the role,
/// the status, and what must be finished before a version is frozen.
package struct StudyActionRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.get("/studies/:studyId/actions", use: page)
        router.post("/studies/:studyId/actions", use: perform)
    }

    @Sendable func page(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, _ in
            let done = request.uri.queryParameters["done"].flatMap { LifecycleAction(rawValue: String($0)) }
            return try await actionsPage(
                studyId, session: session, context: context, problems: [],
                done: done.map { "Done: \(ActionChoice.choice($0).label.lowercased())." }, status: .ok)
        }
    }

    @Sendable func perform(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let form = form ?? FormFields()
            guard let action = form["action"].flatMap(LifecycleAction.init(rawValue:)) else {
                return try await actionsPage(
                    studyId, session: session, context: context,
                    problems: [.init(pointer: "", message: "There is no such action.")], done: nil, status: .unprocessableContent)
            }
            // Updates are shown before they go out; a consent change needs the team's choice.
            var reconsent: Bool?
            if action == .publishUpdates {
                let preview = try await publishPreview(studyId, session: session, context: context)
                guard form["confirm"] == "yes" else {
                    return try await actionsPage(
                        studyId, session: session, context: context, problems: [], done: nil, status: .ok, preview: preview)
                }
                if preview?.consentChanges == true {
                    guard let chosen = form["reconsent"].flatMap({ $0 == "true" ? true : $0 == "false" ? false : nil }) else {
                        return try await actionsPage(
                            studyId, session: session, context: context,
                            problems: [.init(
                                pointer: "/reconsent",
                                message: "Choose whether participants who signed the earlier consent must sign the new version.")],
                            done: nil, status: .unprocessableContent, preview: preview)
                    }
                    reconsent = chosen
                }
            }
            // Launching is undoable only for a study in testing (its testers' data goes).
            let status = action == .launch ? try await pages.load(studyId, session: session, context: context).summary.status : nil
            let choice = status.map { ActionChoice.choice(action, from: $0) } ?? ActionChoice.choice(action)
            if choice.irreversible, form["confirm"] != "yes" {
                return try await actionsPage(
                    studyId, session: session, context: context,
                    problems: [.init(pointer: "", message: "Tick “I understand that this cannot be undone” to \(choice.label.lowercased()).")],
                    done: nil, status: .unprocessableContent)
            }
            let outcome = await AdminAPIError.outcome {
                () async throws(AdminAPIError) in
                try await pages.api.perform(action.rawValue, on: studyId, reconsent: reconsent, token: session.token, logger: context.logger)
            }
            switch outcome {
            case .success:
                return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))/actions?done=\(action.rawValue)")
            case .failure(let error) where [400, 403, 409, 422].contains(error.status):
                let problems = error.problems.isEmpty ? [ValidationProblem(pointer: "", message: error.message)] : error.problems
                return try await actionsPage(
                    studyId, session: session, context: context, problems: problems, done: nil,
                    status: HTTPResponse.Status(code: error.status ?? 422))
            case .failure(let error):
                throw error
            }
        }
    }

    /// What publishing the draft's updates would change, from the newest version's document and
    /// the draft; nil when either cannot be read (the admin API still decides).
    func publishPreview(_ studyId: String, session: ConsoleSession, context: ServiceRequestContext) async throws -> PublishPreview? {
        let state = try await pages.load(studyId, session: session, context: context)
        guard let latest = try await pages.api.versions(of: studyId, token: session.token, logger: context.logger).last,
            let published = try await pages.api.versionDocument(
                of: studyId, version: latest.version, token: session.token, logger: context.logger),
            let draft = state.document
        else { return nil }
        return PublishPreview(published: published, label: latest.label, draft: draft)
    }

    func actionsPage(
        _ studyId: String, session: ConsoleSession, context: ServiceRequestContext, problems: [ValidationProblem], done: String?,
        status: HTTPResponse.Status, preview: PublishPreview? = nil
    ) async throws -> Response {
        async let versions = pages.api.versions(of: studyId, token: session.token, logger: context.logger)
        let state = try await pages.load(studyId, session: session, context: context)
        let choices = ActionChoice.available(from: state.summary.status, studyName: LocalizedText(state.summary.name))
        // Shown before the actions that freeze the draft, as the WCP's check-list was.
        let freezes = choices.contains { [LifecycleAction.publish, .publishForTesting, .launch, .publishUpdates].map(\.rawValue).contains($0.action) }
        let rows = try await versions.reversed().map { version in
            let changed = [
                version.changes.consent ? (version.changes.reconsent ? "consent (everyone signs again)" : "consent") : nil, version.changes.activities ? "activities" : nil,
                version.changes.resources ? "resources" : nil, version.changes.info ? "information" : nil,
            ].compactMap { $0 }
            return ActionsView.Version(
                label: version.label, publishedAt: StudyPageModels.timestamp(version.publishedAt), publishedBy: version.publishedBy,
                changes: changed.isEmpty ? "nothing" : changed.joined(separator: ", "), consentVersion: "1.\(version.consentVersion - 1)")
        }
        // The team's own confirmations, beside the rules' check-list: said, never in the way.
        var unconfirmed: ManualChecklistSummary?
        if freezes {
            unconfirmed = ManualChecklistSummary(try await pages.api.checklist(of: studyId, token: session.token, logger: context.logger))
        }
        let view = ActionsView(
            manualChecklist: unconfirmed,
            checklist: freezes ? ChecklistView(state.checklist(storage: await pages.storageFinding(state, session: session, context: context))) : nil, choices: choices, hasChoices: !choices.isEmpty,
            mayAct: state.role == .studyAdmin, done: done, preview: preview, versions: rows, hasVersions: !rows.isEmpty,
            problemReport: ProblemReport(
                heading: "Not done",
                StudyPageModels.problems(problems, page: nil, values: FormFields(), sections: state.sections, draft: state.draft, studyId: studyId)))
        return pages.render(view, title: "Actions · \(state.summary.name)", session: session, state: state, current: "actions", status: status)
    }
}

/// `actions.mustache`: the lifecycle actions the study's status allows, and its versions.
struct ActionsView: PageView {
    static let template = "actions"

    struct Version {
        var label: String
        var publishedAt: String
        var publishedBy: String
        /// Which parts changed from the version before, in words.
        var changes: String
        var consentVersion: String
    }

    var manualChecklist: ManualChecklistSummary?
    var checklist: ChecklistView?
    var choices: [ActionChoice]
    var hasChoices: Bool
    /// Only study admins take actions.
    var mayAct: Bool
    /// What the action just taken did.
    var done: String?
    /// What publishing the updates would change, before it is confirmed.
    var preview: PublishPreview?
    var versions: [Version]
    var hasVersions: Bool
    var problemReport: ProblemReport?
}
