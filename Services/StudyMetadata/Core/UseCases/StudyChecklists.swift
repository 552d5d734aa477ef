import Foundation
import ServiceKit
import StudyModels

/// A study's manual check-list before launch (`LaunchChecklist`): read by anyone on the team,
/// ticked by those who edit the study.
package struct StudyChecklists: Sendable {
    package let studies: any StudySummaries
    package let store: any ChecklistTicks

    package init(studies: any StudySummaries, store: any ChecklistTicks) {
        self.studies = studies
        self.store = store
    }

    package func state(studyId: String) async throws -> StudyChecklistState {
        guard try await studies.exists(studyId: studyId) else { throw StudyMetadataError.noStudy(studyId) }
        return StudyChecklistState(ticks: try await store.ticks(studyId: studyId))
    }

    /// Makes `ticks.ticked` the ticked items. Refusals: an item that is not on the list, or one
    /// named twice (422, nothing changed); no such study (404).
    package func tick(_ ticks: StudyChecklistTicks, studyId: String, by actor: String) async throws -> StudyChecklistState {
        var problems: [ValidationProblem] = []
        var seen: [String] = []
        for (index, id) in ticks.ticked.enumerated() {
            if LaunchChecklist.item(id) == nil {
                problems.append(.init(
                    pointer: "/ticked/\(index)",
                    message: "is not an item of the check-list (\(LaunchChecklist.items.map(\.id).joined(separator: ", ")))"))
            } else if seen.contains(where: { $0.unicodeScalars.elementsEqual(id.unicodeScalars) }) {
                problems.append(.init(pointer: "/ticked/\(index)", message: "names an item already named"))
            }
            seen.append(id)
            // The list is short: a long body is a mistake, and its problems need not all be listed.
            if problems.count >= LaunchChecklist.items.count { break }
        }
        guard problems.isEmpty else { throw StudyMetadataError.invalid(problems, subject: .checklist) }
        guard let found = try await store.set(ticked: ticks.ticked, studyId: studyId, by: actor) else {
            throw StudyMetadataError.noStudy(studyId)
        }
        return StudyChecklistState(ticks: found)
    }
}
