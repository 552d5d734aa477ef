import ConsoleCore
import Foundation
import JSONText
import ServiceKitHTTP
import StudyModels

/// What a study page needs, read at once through the admin API.
struct StudyPageState {
    var summary: StudySummary
    var draft: JSONValue
    var revision: String
    var sections: [StudySection]

    /// The signed-in admin's role on the study, as the summary says.
    var role: StudyRole? { summary.role }
    /// Editors change the draft until the study is closed (the admin API decides in the end).
    var editable: Bool { (role ?? .viewer) >= .editor && summary.status != .deactivated }
    /// The sections' check-list before publishing; nil for a closed study, or a draft the
    /// study model cannot read (the admin API would not have saved one).
    func checklist(now: Date = Date()) -> StudyChecklist? {
        guard summary.status != .deactivated, let data = try? JSONEncoder().encode(draft),
            let document = try? JSONDecoder().decode(StudyDocument.self, from: data)
        else { return nil }
        return StudyChecklist(document: document, sections: sections, now: now)
    }

    var spanish: Bool {
        if case .array(let languages) = draft[pointer: JSONPointer(tokens: ["languages"])] {
            return languages.contains(.string("es"))
        }
        return false
    }
}

extension ConsolePages {
    /// The study's summary (with the admin's role) and its draft: one admin API call when the
    /// draft at the summary's revision was read before. `withApps`: the apps too, for the page
    /// that chooses the study's app.
    func load(_ studyId: String, session: ConsoleSession, context: ServiceRequestContext, withApps: Bool = false) async throws -> StudyPageState {
        async let apps = withApps ? api.apps(token: session.token, logger: context.logger) : []
        let summary = try await api.study(studyId, token: session.token, logger: context.logger)
        let (document, revision) = try await api.draft(studyId, summary: summary, token: session.token, logger: context.logger)
        return StudyPageState(summary: summary, draft: document, revision: revision, sections: StudySection.all(apps: try await apps))
    }

    /// The check-list's part of a page (`checklist.mustache`).
    func addChecklist(_ checklist: StudyChecklist?, to page: inout [String: Any]) {
        guard let checklist else { return }
        page["showChecklist"] = true
        page["checklist"] = checklist.items
        page["checklistReady"] = checklist.isReady
        page["checklistCautions"] = checklist.items.contains { $0.state == .check }
    }

    /// What every study page's layout reads: the study, its sections, the current page.
    func studyPage(title: String, session: ConsoleSession, summary: StudySummary, role: StudyRole?, sections: [StudySection], current: String?) -> [String: Any] {
        var page = base(title: title, session: session)
        page["study"] = StudyPageModels.study(summary, role: role)
        page["sections"] = StudyPageModels.sections(sections, current: current)
        page["overviewCurrent"] = current == nil
        page["actionsCurrent"] = current == "actions"
        page["teamCurrent"] = current == "team"
        page["tokensCurrent"] = current == "tokens"
        page["messagesCurrent"] = current == "messages"
        page["filesCurrent"] = current == "files"
        page["schemaCurrent"] = current == "schema"
        page["participantsCurrent"] = current == "participants"
        page["invitationsCurrent"] = current == "invitations"
        page["dataCurrent"] = current == "data"
        page["processingCurrent"] = current == "processing"
        page["chartsCurrent"] = current == "charts"
        page["auditCurrent"] = current == "audit"
        page["documentCurrent"] = current == "document"
        return page
    }
}
