import Foundation
import JSONText

/// What a draft says that the apps would not do as the coordinator expects, found before any
/// participant sees it. None of it keeps a draft from being saved or published: each is a warning
/// beside the saved draft and on the study's checklist.
enum ContentWarnings {
    static func of(_ document: StudyDocument) -> [ValidationProblem] {
        untranslatedLanguages(document) + ignoredBranches(document) + unscheduledWeekdays(document)
    }

    /// A weekday or day of the month on an anchor-relative schedule: served to the apps, but
    /// neither MyStudies app schedules by it; runs start on the day the activity opens
    /// (docs/schedules.md), and the server's runs follow the apps.
    static func unscheduledWeekdays(_ document: StudyDocument) -> [ValidationProblem] {
        document.activities.enumerated().flatMap { index, activity -> [ValidationProblem] in
            let schedule = activity.schedule
            guard schedule.anchor != nil else { return [] }
            var found: [ValidationProblem] = []
            if schedule.frequency == .weekly, schedule.dayOfWeek != nil {
                found.append(ValidationProblem(
                    pointer: "/activities/\(index)/schedule/dayOfWeek",
                    message: "the apps do not schedule by dayOfWeek: weekly runs start on the day the activity opens (startDays after the anchor), whatever weekday that is"))
            }
            if schedule.frequency == .monthly, schedule.dateOfMonth != nil {
                found.append(ValidationProblem(
                    pointer: "/activities/\(index)/schedule/dateOfMonth",
                    message: "the apps do not schedule by dateOfMonth: monthly runs start on the day the activity opens (startDays after the anchor), whatever date that is"))
            }
            return found
        }
    }

    /// A language switched on with no text in it: the apps fall back to English everywhere, and
    /// the preview in that language shows English too, without saying so.
    static func untranslatedLanguages(_ document: StudyDocument) -> [ValidationProblem] {
        let others = document.languages.enumerated().filter { $0.element != LocalizedText.defaultLanguage }
        guard !others.isEmpty, let data = try? JSONEncoder().encode(document), let tree = try? JSONValue.parse(data, budget: .studyDocument) else {
            return []
        }
        // A text with more than its English is an object keyed by language (`LocalizedText`).
        var written: Set<String> = []
        func walk(_ value: JSONValue) {
            switch value {
            case .object(let members):
                for (key, member) in members {
                    if case .string(let text) = member, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                        written.insert(key)
                    }
                    walk(member)
                }
            case .array(let items): items.forEach(walk)
            default: break
            }
        }
        walk(tree)
        return others.filter { !written.contains($0.element) }.map { index, language in
            ValidationProblem(
                pointer: "/languages/\(index)",
                message: "\(Self.languageName(language)) is switched on, but no text has a \(Self.languageName(language)) version yet: participants who read it are shown English")
        }
    }

    /// Branch targets in an activity whose branching is off: the apps go from step to step in
    /// order and never read them.
    static func ignoredBranches(_ document: StudyDocument) -> [ValidationProblem] {
        document.activities.enumerated().compactMap { index, activity in
            guard !activity.branching else { return nil }
            let keys = activity.steps.map(\.key)
            let branching = activity.steps.enumerated().filter { position, step in
                let next = position + 1 < keys.count ? keys[position + 1] : ""
                return (step.destinations ?? []).contains { !$0.condition.isEmpty || $0.destination != next }
            }.map(\.element.key)
            guard !branching.isEmpty else { return nil }
            let listed = branching.prefix(5).joined(separator: ", ") + (branching.count > 5 ? " and \(branching.count - 5) more" : "")
            return ValidationProblem(
                pointer: "/activities/\(index)/branching",
                message: "branching is off, so the apps ignore the branch targets of step\(branching.count == 1 ? "" : "s") \(listed); turn branching on, or remove them")
        }
    }

    static func languageName(_ code: String) -> String { LanguageNames.name(code) }
}
