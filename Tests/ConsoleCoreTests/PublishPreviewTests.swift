import ConsoleCore
import Foundation
import StudyModels
import Testing

/// What the console says publishing the draft's updates changes for participants, from the
/// newest version and the draft (`StudyDocumentDifference`, the comparison study-metadata
/// versions by).
@Suite struct PublishPreviewTests {
    static func example() throws -> StudyDocument {
        try JSONDecoder().decode(StudyDocument.self, from: try Data(contentsOf: ConsoleUseCaseRulesTests.exampleURL))
    }

    @Test func eachChangeIsSaidInWordsAndAConsentChangeAsksTheChoice() throws {
        let published = try Self.example()
        var draft = published
        #expect(PublishPreview(published: published, label: "1.3", draft: draft).nothingChanged)

        // A new label alone is no change for participants.
        draft.versionLabel = "9.9"
        #expect(PublishPreview(published: published, label: "1.3", draft: draft).nothingChanged)

        try #require(draft.activities.count >= 3)
        let removed = draft.activities.removeLast()
        draft.activities[0].title = "Morning check-in"
        var added = draft.activities[1]
        added.activityId = "evening"
        added.title = "Evening check-in"
        draft.activities.append(added)
        draft.consent.visualScreens[0].text = "What we ask of you, and who sees your answers."
        let preview = PublishPreview(published: published, label: "1.3", draft: draft)
        #expect(preview.consentChanges && !preview.nothingChanged && preview.currentVersion == "1.3")
        try #require(preview.lines.count == 4)
        #expect(preview.lines[0].hasPrefix("The consent changes"))
        #expect(preview.lines[1] == "New activities appear in the app: “Evening check-in”.")
        #expect(preview.lines[2].hasSuffix(": “Morning check-in”."))
        #expect(preview.lines[3] == "Activities leave the app (their answers so far are kept): “\(removed.title.text(for: nil))”.")

        // Information alone: no consent choice.
        var info = published
        info.tagline = "Sleep, measured."
        let infoOnly = PublishPreview(published: published, label: "1.3", draft: info)
        #expect(!infoOnly.consentChanges && infoOnly.lines.count == 1 && infoOnly.lines[0].hasPrefix("The study's information"))
    }
}
