import Foundation
import StudyModels

/// What publishing the draft's updates changes for participants, in a coordinator's words, shown
/// before `publish-updates` is confirmed: the version the apps will see, each activity added,
/// changed or removed, and whether the consent changes (then the team says whether those who
/// signed must sign again).
package struct PublishPreview: Sendable, Equatable {
    /// The version the apps hold now.
    package var currentVersion: String
    package var consentChanges: Bool
    /// One sentence per change, in the order a participant meets them.
    package var lines: [String]
    /// Stored, as the page's template reads it.
    package var nothingChanged: Bool

    package init(published: StudyDocument, label: String, draft: StudyDocument) {
        currentVersion = label
        let difference = StudyDocumentDifference(from: published, to: draft)
        consentChanges = difference.consent
        func names(_ ids: [String], in document: StudyDocument) -> String {
            ids.map { id in
                let title = document.activities.first { $0.activityId == id }?.title.text(for: nil) ?? id
                return "“\(title)”"
            }.joined(separator: ", ")
        }
        var lines: [String] = []
        if difference.consent {
            lines.append("The consent changes: the apps get a new consent version, which everyone who joins from now on signs.")
        }
        if !difference.addedActivities.isEmpty {
            lines.append("New activities appear in the app: \(names(difference.addedActivities, in: draft)).")
        }
        if !difference.changedActivities.isEmpty {
            lines.append(
                "Changed activities get a new version; answers from now on are to the new one: \(names(difference.changedActivities, in: draft)).")
        }
        if !difference.removedActivities.isEmpty {
            lines.append(
                "Activities leave the app (their answers so far are kept): \(names(difference.removedActivities, in: published)).")
        }
        if difference.resources { lines.append("The resources change.") }
        if difference.info { lines.append("The study's information and settings change (listing, overview, eligibility, notifications or dashboard).") }
        self.lines = lines
        nothingChanged = lines.isEmpty
    }
}
