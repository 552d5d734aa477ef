import ConsoleCore
import Foundation
import Hummingbird
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// The manual check-list before launch (WCP's), on the study's summary page: its editors tick
/// what no rule can check (IRB review completed, app store approval, ...), and the page says who
/// ticked each item and when.
package struct ManualChecklistRoutes: Sendable {
    let pages: ConsolePages

    package init(pages: ConsolePages) {
        self.pages = pages
    }

    package func add(to router: Router<ServiceRequestContext>) {
        router.post("/studies/:studyId/checklist", use: tick)
    }

    /// The ticked boxes become the ticked items; the summary page again, at the list.
    @Sendable func tick(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        let studyId = try context.parameters.decoded("studyId")
        return try await pages.signedIn(request, context) { session, form in
            let ticked = (form ?? FormFields()).all("ticked")
            _ = try await pages.api.tickChecklist(ticked, of: studyId, token: session.token, logger: context.logger)
            return PageRenderer.redirect(to: "/studies/\(AdminAPIClient.segment(studyId))?ticked=1#manual-checklist")
        }
    }
}

/// What `manual-checklist.mustache` reads: each item with its tick, who gave it and when.
struct ManualChecklistView {
    struct Row {
        var item: String
        var title: String
        var detail: String
        var ticked: Bool
        /// "Ticked by … on … UTC"; nil when not ticked.
        var tickedBy: String?
    }

    var rows: [Row]
    var tickedCount: Int
    var total: Int
    /// Whether the signed-in admin may tick (editors and study admins of a study not closed).
    var editable: Bool
    /// The list was just saved.
    var saved: Bool

    init(_ state: StudyChecklistState, editable: Bool, saved: Bool) {
        rows = state.items.map { entry in
            let by = entry.tickedBy.map { who in
                "Ticked by \(who)" + (entry.tickedAt.map { " on \(StudyPageModels.timestamp($0))" } ?? "")
            }
            return Row(item: entry.item, title: entry.title, detail: entry.detail, ticked: entry.ticked, tickedBy: by)
        }
        tickedCount = state.tickedCount
        total = state.items.count
        self.editable = editable
        self.saved = saved
    }
}

/// The manual check-list in a line, before the actions that publish: how many items the team
/// has confirmed, and which not yet.
struct ManualChecklistSummary {
    var tickedCount: Int
    var total: Int
    /// The titles of the items not ticked, in the list's order; empty when all are.
    var unticked: String
    var complete: Bool

    init(_ state: StudyChecklistState) {
        tickedCount = state.tickedCount
        total = state.items.count
        unticked = state.items.filter { !$0.ticked }.map(\.title).joined(separator: "; ")
        complete = state.tickedCount == state.items.count
    }
}
