import Foundation
import StudyModels

/// What the check before a version is frozen sends and what it makes of the answer
/// (docs/admin-api.md, The storage check): each activity's design as the response service will
/// read it, and each problem the response service found, put in a coordinator's words at the
/// step it is in.
package enum StorageCheck {
    /// The activities of `draft` that freezing it with `counters` would give a new version (all
    /// of them when nothing was published, `previous` nil), as each would be served: a version
    /// already published was checked when it was, and its tables hold it.
    package static func designs(of draft: StudyDocument, counters: VersionCounters, previous: VersionCounters?) -> [ActivityReply] {
        draft.activities.filter { previous?.activities[$0.activityId] != counters.activities[$0.activityId] }.map { activity in
            ActivityReply(
                activity: ActivityDesign(activity, in: draft, activityVersion: counters.activities[activity.activityId] ?? 1)
                    .served(language: nil),
                assessment: activity.assessment?.document)
        }
    }

    /// The response service's problems, each at the step it names (else at its activity), in
    /// the words the check-list and a refused publish show.
    package static func validationProblems(_ problems: [StorageProblem], in draft: StudyDocument) -> [ValidationProblem] {
        problems.map { problem in
            let index = draft.activities.firstIndex { $0.activityId == problem.activityId }
            var pointer = index.map { "/activities/\($0)" } ?? "/activities"
            if let index, let key = problem.stepKey, let at = stepPointer(key, in: draft.activities[index].steps) {
                pointer += at
            }
            return ValidationProblem(pointer: pointer, message: words(problem))
        }
    }

    /// `/steps/2`, or `/steps/2/steps/0` for a question of a form.
    private static func stepPointer(_ key: String, in steps: [ActivityStep]) -> String? {
        for (index, step) in steps.enumerated() {
            if step.key.unicodeScalars.elementsEqual(key.unicodeScalars) { return "/steps/\(index)" }
            if let inner = step.steps, let at = stepPointer(key, in: inner) { return "/steps/\(index)" + at }
        }
        return nil
    }

    private static let processingPrefix = "Unable to apply changes: "

    private static func words(_ problem: StorageProblem) -> String {
        var reason = problem.message
        if reason.hasPrefix(processingPrefix) { reason.removeFirst(processingPrefix.count) }
        return "answers to \(problem.activityId) could not be stored: \(reason)"
    }
}
