import ConsoleCore
import Foundation
import HTTPTypes
import Hummingbird
import JSONText
import ServiceKitHTTP
import StudyModels

/// What a study page needs, read at once through the admin API.
struct StudyPageState {
    var summary: StudySummary
    var draft: JSONValue
    var revision: String
    var sections: [StudySection]
    /// What the pages drawn from this state are kept under (`SectionFormCache`): the draft's
    /// version, and the apps the study's basics choose from when they were read. Nil when the
    /// draft read is not the one the summary names (a save came in between).
    var version: String?

    /// The signed-in admin's role on the study, as the summary says.
    var role: StudyRole? { summary.role }
    /// Editors change the draft until the study is closed (the admin API decides in the end).
    var editable: Bool { (role ?? .viewer) >= .editor && summary.status != .deactivated }
    /// The sections' check-list before publishing; nil for a closed study, or a draft the
    /// study model cannot read (the admin API would not have saved one).
    func checklist(now: Date = Date(), storage: StudyChecklist.StorageFinding = .notAsked) -> StudyChecklist? {
        guard summary.status != .deactivated, let document else { return nil }
        return StudyChecklist(document: document, sections: sections, now: now, storage: storage)
    }

    /// The draft as the study model reads it; nil for one it cannot read (the admin API would not
    /// have saved one).
    var document: StudyDocument? {
        guard let data = try? JSONEncoder().encode(draft) else { return nil }
        return try? JSONDecoder().decode(StudyDocument.self, from: data)
    }

    var spanish: Bool {
        if case .array(let languages) = draft[pointer: JSONPointer(tokens: ["languages"])] {
            return languages.contains(.string("es"))
        }
        return false
    }
}

extension ConsolePages {
    /// The storage check of the study's draft, for an editor's check-list: asked of study-metadata
    /// (which has the response service rehearse), not asked for those who cannot publish.
    func storageFinding(_ state: StudyPageState, session: ConsoleSession, context: ServiceRequestContext) async
        -> StudyChecklist.StorageFinding
    {
        guard state.editable else { return .notAsked }
        do {
            return .checked(try await api.storageCheck(of: state.summary.studyId, token: session.token, logger: context.logger))
        } catch {
            context.logger.warning("the storage check could not be had", metadata: ["error": "\(error)"])
            return .unchecked("the response service did not answer")
        }
    }

    /// The study's summary (with the admin's role) and its draft: one admin API call when the
    /// draft at the summary's revision was read before. `withApps`: the apps too, for the page
    /// that chooses the study's app.
    func load(_ studyId: String, session: ConsoleSession, context: ServiceRequestContext, withApps: Bool = false) async throws -> StudyPageState {
        async let readApps = withApps ? api.apps(token: session.token, logger: context.logger) : []
        let summary = try await api.study(studyId, token: session.token, logger: context.logger)
        let (document, revision) = try await api.draft(studyId, summary: summary, token: session.token, logger: context.logger)
        let apps = try await readApps
        // The apps are part of the version where they were read (the basics page chooses from them).
        let appsRead = withApps ? " " + lengthPrefixed(apps.flatMap { [$0.appId, "\($0.name)"] }) : ""
        let version = revision == AdminAPIClient.etag(summary.draftRevision) ? AdminAPIClient.draftVersion(of: summary) + appsRead : nil
        return StudyPageState(summary: summary, draft: document, revision: revision, sections: StudySection.all(apps: apps), version: version)
    }

    /// The layout's values for a page titled `title`.
    func layout(title: String, session: ConsoleSession?) -> PageLayout {
        PageLayout(title: title, user: session.map { .init(email: $0.email) }, csrf: session?.csrf)
    }

    /// A page outside any study.
    func render<Body: PageView>(_ body: Body, title: String, session: ConsoleSession?, status: HTTPResponse.Status = .ok) -> Response {
        renderer.page(Page(layout: layout(title: title, session: session), menu: nil, body: body), status: status)
    }

    /// A study's page, with the study's menu; `current` is the open page's path under the study
    /// (nil for its summary).
    func render<Body: PageView>(
        _ body: Body, title: String, session: ConsoleSession, state: StudyPageState, current: String?, status: HTTPResponse.Status = .ok
    ) -> Response {
        render(body, title: title, session: session, summary: state.summary, sections: state.sections, current: current, status: status)
    }

    func render<Body: PageView>(
        _ body: Body, title: String, session: ConsoleSession, summary: StudySummary, sections: [StudySection], current: String?,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        let menu = StudyMenu(summary: summary, role: summary.role, sections: sections, current: current)
        return renderer.page(Page(layout: layout(title: title, session: session), menu: menu, body: body), status: status)
    }
}

/// What `checklist.mustache` reads: the sections' check-list before publishing.
struct ChecklistView {
    struct Row {
        var slug: String
        var title: String
        var state: String
        var stateLabel: String
        var reason: String?
        /// The page of the step the first problem is in.
        var stepPath: String?
        /// "and N more" when the section has more than the one reason shown.
        var more: String?
    }

    var ready: Bool
    /// Some section is marked Check (it publishes, but should be looked at).
    var cautions: Bool
    var rows: [Row]

    /// nil for no check-list (a closed study).
    init?(_ checklist: StudyChecklist?) {
        guard let checklist else { return nil }
        ready = checklist.isReady
        cautions = checklist.items.contains { $0.state == .check }
        rows = checklist.items.map { item in
            Row(
                slug: item.slug, title: item.title, state: item.state.rawValue, stateLabel: item.state.label, reason: item.reason,
                stepPath: item.stepPath,
                more: item.count > 1 ? "and \(item.count - 1) more" : nil)
        }
    }
}
