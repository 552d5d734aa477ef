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
        /// The console page of the step the first problem is in, when it is a step's.
        package var stepPath: String? = nil
    }

    /// What the storage check (study-metadata's, which has the response service store a response
    /// to every activity and roll it back) said of the draft.
    package enum StorageFinding: Sendable {
        /// Not asked (a viewer's page, or a page that does not lead to publishing).
        case notAsked
        case checked([ValidationProblem])
        /// It could not be asked now: the reason.
        case unchecked(String)
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
    /// `storage`: the storage check's finding, whose problems Publish and Launch refuse too.
    package init(document: StudyDocument, sections: [StudySection], now: Date, storage: StorageFinding = .notAsked) {
        // What PublishGuard.problems says, from the one review.
        let review = StudyValidator.review(document)
        var problems = review.problems + review.unfinished + PublishGuard.pastSchedules(document, now: now)
        var warnings = review.warnings + PublishGuard.warnings(document, now: now)
        switch storage {
        case .notAsked: break
        case .checked(let found): problems += found
        case .unchecked(let reason):
            warnings.append(ValidationProblem(
                pointer: "/activities",
                message: "whether answers can be stored could not be checked now (\(reason)); publishing checks it again"))
        }
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
        // An assessment the MyStudies apps cannot run is served to Sage's apps only: a study
        // whose participants use MyStudies would never see it.
        warnings += document.activities.enumerated().compactMap { index, activity in
            guard let assessment = activity.assessment, assessment.isSageOnly else { return nil }
            return ValidationProblem(
                pointer: "/activities/\(index)",
                message: "\(activity.activityId) is Sage only: the MyStudies apps never show it (\(assessment.sageOnly[0].message))")
        }
        // An activity imported on its own is given a placeholder schedule; the team chooses
        // one on its page (saving that page clears the mark).
        warnings += document.activities.enumerated().compactMap { index, activity in
            guard activity.placeholderSchedule == true else { return nil }
            let placeholder = activity.schedule.frequency == .ongoing ? "always available" : "once, from the launch until the study ends"
            return ValidationProblem(
                pointer: "/activities/\(index)/schedule",
                message: "\(activity.activityId) still has the schedule its import gave it (\(placeholder)): choose when participants get it on its page")
        }
        items = sections.map { section in
            let own = problems.filter { owner($0) == section.slug }
            let cautions = (warnings + empty).filter { owner($0) == section.slug }
            if let first = own.first {
                return Item(
                    slug: section.slug, title: section.title, state: .attention, reason: first.message, count: own.count,
                    stepPath: Self.stepPath(first.pointer, in: document))
            }
            if let first = cautions.first {
                return Item(slug: section.slug, title: section.title, state: .check, reason: first.message, count: cautions.count)
            }
            let state: State = unused.contains(section.slug) ? .unused : .complete
            return Item(slug: section.slug, title: section.title, state: state, reason: nil, count: 0)
        }
    }

    /// `/activities/2/steps/4…` → the console's page of that activity's step 4 (a question of a
    /// form is edited on its form's page).
    static func stepPath(_ pointer: String, in document: StudyDocument) -> String? {
        let tokens = pointer.split(separator: "/", omittingEmptySubsequences: true)
        guard tokens.count >= 4, tokens[0] == "activities", tokens[2] == "steps", let activity = Int(tokens[1]),
            let step = Int(tokens[3]), document.activities.indices.contains(activity),
            document.activities[activity].steps.indices.contains(step)
        else { return nil }
        let activityId = document.activities[activity].activityId
        let key = document.activities[activity].steps[step].key
        return "/studies/\(AdminAPIClient.segment(document.studyId))/activities/\(AdminAPIClient.segment(activityId))/steps/"
            + AdminAPIClient.segment(key)
    }
}
