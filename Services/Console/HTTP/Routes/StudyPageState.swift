import ConsoleCore
import Foundation
import JSONText
import ServiceKitHTTP
import StudyModels

/// What a study page needs, read at once through the admin API.
struct StudyPageState {
    var summary: StudySummary
    var me: AdminProfile
    var draft: JSONValue
    var revision: String
    var sections: [StudySection]

    var role: StudyRole? { me.role(on: summary.studyId) }
    /// Editors change the draft until the study is closed (the admin API decides in the end).
    var editable: Bool { (role ?? .viewer) >= .editor && summary.status != .deactivated }
    var spanish: Bool {
        if case .array(let languages) = draft[pointer: JSONPointer(tokens: ["languages"])] {
            return languages.contains(.string("es"))
        }
        return false
    }
}

extension ConsolePages {
    func load(_ studyId: String, session: ConsoleSession, context: ServiceRequestContext) async throws -> StudyPageState {
        async let summary = api.study(studyId, token: session.token, logger: context.logger)
        async let me = api.me(token: session.token, logger: context.logger)
        async let draft = api.draft(studyId, token: session.token, logger: context.logger)
        async let apps = api.apps(token: session.token, logger: context.logger)
        let (document, revision) = try await draft
        return StudyPageState(
            summary: try await summary, me: try await me, draft: document, revision: revision,
            sections: StudySection.all(apps: try await apps))
    }

    /// What every study page's layout reads: the study, its sections, the current page.
    func studyPage(title: String, session: ConsoleSession, summary: StudySummary, role: StudyRole?, sections: [StudySection], current: String?) -> [String: Any] {
        var page = base(title: title, session: session)
        page["study"] = StudyPageModels.study(summary, role: role)
        page["sections"] = StudyPageModels.sections(sections, current: current)
        page["overviewCurrent"] = current == nil
        page["actionsCurrent"] = current == "actions"
        page["teamCurrent"] = current == "team"
        page["auditCurrent"] = current == "audit"
        page["documentCurrent"] = current == "document"
        return page
    }
}
