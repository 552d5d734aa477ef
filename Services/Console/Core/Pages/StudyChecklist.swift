import Foundation
import StudyModels

/// The study's sections as the WCP's check-list showed them before publishing: each complete,
/// needing attention (with the first reason), to check (a warning that does not keep the study
/// from being published), or not used (an optional section left empty). It is worked out from the
/// draft by the same rules study-metadata applies when it freezes a version (`PublishGuard`), so
/// what it says needs attention is what Publish and Launch would refuse.
package struct StudyChecklist: Sendable {
    package enum State: String, Sendable {
        case complete
        case attention
        case check
        case unused

        package var label: String {
            switch self {
            case .complete: "Complete"
            case .attention: "Needs attention"
            case .check: "Check"
            case .unused: "Not used"
            }
        }
    }

    package struct Item: Sendable, Equatable {
        package var slug: String
        package var title: String
        package var state: State
        /// The first problem or warning, in words; nil when complete or not used.
        package var reason: String?
        /// How many problems (or warnings) the section has.
        package var count: Int
    }

    package var items: [Item]

    /// Whether Publish and Launch would take the draft: nothing needs attention.
    package var isReady: Bool { !items.contains { $0.state == .attention } }

    /// The section that edits each member of the study document; what no page edits (the
    /// source of an imported study) is reported under the basic information.
    static let owners: [String: String] = [
        "platforms": "settings", "enrolling": "settings", "rejoin": "settings", "withdrawal": "settings", "timeZone": "settings",
        "languages": "settings", "overview": "overview", "eligibility": "eligibility", "consent": "consent",
        "activities": "activities", "arms": "activities", "participantProperties": "properties", "resources": "resources",
        "notifications": "notifications", "dashboard": "dashboard",
    ]

    /// `sections`: the builder's pages in their order (`StudySection.all`).
    package init(document: StudyDocument, sections: [StudySection], now: Date) {
        // What PublishGuard.problems says, from the one review.
        let review = StudyValidator.review(document)
        let problems = review.problems + review.unfinished + PublishGuard.pastSchedules(document, now: now)
        let warnings = review.warnings + PublishGuard.warnings(document, now: now)
        func owner(_ problem: ValidationProblem) -> String {
            let member = problem.pointer.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first.map(String.init) ?? ""
            return Self.owners[member] ?? "basics"
        }
        let unused: Set<String> = [
            document.participantProperties.isEmpty ? "properties" : nil, document.resources.isEmpty ? "resources" : nil,
            document.notifications.isEmpty ? "notifications" : nil,
            document.dashboard.statistics.isEmpty && document.dashboard.charts.isEmpty ? "dashboard" : nil,
        ].compactMap { $0 }.reduce(into: []) { $0.insert($1) }
        // Not a warning of the draft (a study is built page by page, and every save before the
        // first activity would carry it), but what the list is for.
        let empty =
            document.activities.isEmpty
            ? [ValidationProblem(pointer: "/activities", message: "no activities yet: participants who join would have nothing to answer")]
            : []
        items = sections.map { section in
            let own = problems.filter { owner($0) == section.slug }
            let cautions = (warnings + empty).filter { owner($0) == section.slug }
            if let first = own.first {
                return Item(slug: section.slug, title: section.title, state: .attention, reason: first.message, count: own.count)
            }
            if let first = cautions.first {
                return Item(slug: section.slug, title: section.title, state: .check, reason: first.message, count: cautions.count)
            }
            let state: State = unused.contains(section.slug) ? .unused : .complete
            return Item(slug: section.slug, title: section.title, state: state, reason: nil, count: 0)
        }
    }
}
