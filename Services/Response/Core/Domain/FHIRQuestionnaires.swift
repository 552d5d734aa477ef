import FHIR
import Foundation
import StudyModels

/// The questionnaires of a study as the FHIR API lists them (docs/fhir.md, Questionnaire): one
/// per published activity version, in the order they were first published, each `active` while
/// it is its activity's version in the study's newest version and the study has not closed, and
/// `retired` once superseded or removed.
package struct FHIRQuestionnaireListing: Sendable, Equatable {
    package struct Entry: Sendable, Equatable {
        /// Its logical id (`FHIRId.questionnaire`).
        package var id: String
        package var activityId: String
        /// The version label, as responses name it.
        package var version: String
        /// When the study version that first held it was published.
        package var publishedAt: Date
        package var retired: Bool
    }

    package var entries: [Entry]

    package init(history: StudyVersionHistory, studyClosed: Bool) {
        var entries: [Entry] = []
        var seen = Set<[String]>()
        for version in history.versions {
            for activity in version.activities where seen.insert([activity.activityId, activity.label]).inserted {
                entries.append(Entry(
                    id: FHIRId.questionnaire(studyId: history.studyId, activityId: activity.activityId, version: activity.label),
                    activityId: activity.activityId, version: activity.label, publishedAt: version.publishedAt, retired: true))
            }
        }
        let current = Set((history.versions.last?.activities ?? []).map { [$0.activityId, $0.label] })
        for index in entries.indices where !studyClosed && current.contains([entries[index].activityId, entries[index].version]) {
            entries[index].retired = false
        }
        self.entries = entries
    }

    /// The entries a search matches, each with its place in the listing (1-based; a page's
    /// cursor), from after `search.after`.
    package func matches(_ search: FHIRSearch) -> [(place: Int64, entry: Entry)] {
        guard !search.nothing else { return [] }
        return entries.enumerated().compactMap { offset, entry in
            let place = Int64(offset + 1)
            guard place > (search.after ?? 0) else { return nil }
            if let ids = search.textIds, !ids.contains(where: { $0.unicodeScalars.elementsEqual(entry.id.unicodeScalars) }) { return nil }
            if let activityId = search.activityId, !activityId.unicodeScalars.elementsEqual(entry.activityId.unicodeScalars) { return nil }
            if let version = search.version, !version.unicodeScalars.elementsEqual(entry.version.unicodeScalars) { return nil }
            if let status = search.status, status != (entry.retired ? "retired" : "active") { return nil }
            return (place, entry)
        }
    }
}
