import Foundation
import JSONText
import StudyModels

/// What a save changed in a study's draft, for its audit event: the members of the document that
/// differ, by their names in it, and for activities which ones (`activities (daily changed, kicks
/// added)`), so the audit log says more than that the draft was saved.
package enum DraftChanges {
    /// At most this many activity ids are named; the rest are counted.
    static let namedActivities = 10

    /// `old` → `new`, in words; "nothing" when they are equal.
    package static func between(_ old: StudyDocument, _ new: StudyDocument) -> String {
        guard let before = tree(old), let after = tree(new), case .object(let was) = before, case .object(let now) = after else {
            return "the document"
        }
        var changed: [String] = []
        for member in Set(was.keys).union(now.keys).sorted() where was[member] != now[member] {
            changed.append(member == "activities" ? activities(old.activities, new.activities) : member)
        }
        return changed.isEmpty ? "nothing" : changed.joined(separator: ", ")
    }

    static func activities(_ old: [StudyActivity], _ new: [StudyActivity]) -> String {
        let before = Dictionary(old.map { ($0.activityId, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.map(\.activityId))
        var words: [String] = []
        for activity in new {
            if let previous = before[activity.activityId] {
                if previous != activity { words.append("\(activity.activityId) changed") }
            } else {
                words.append("\(activity.activityId) added")
            }
        }
        words += old.filter { !after.contains($0.activityId) }.map { "\($0.activityId) removed" }
        if words.isEmpty { return "activities (reordered)" }
        let named = words.prefix(namedActivities).joined(separator: ", ")
        return "activities (\(named)\(words.count > namedActivities ? " and \(words.count - namedActivities) more" : ""))"
    }

    static func tree(_ document: StudyDocument) -> JSONValue? {
        guard let data = try? JSONEncoder().encode(document) else { return nil }
        return try? JSONValue.parse(data, budget: .studyDocument)
    }
}
