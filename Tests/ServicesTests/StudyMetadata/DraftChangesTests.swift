import Foundation
import StudyMetadataCore
import StudyModels
import Testing

/// What a draft's audit event says changed; no I/O.
@Suite struct DraftChangesTests {
    static func example() throws -> StudyDocument {
        try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: MetadataAdmin.exampleURL))
    }

    @Test func theMembersThatDifferAreNamedAlphabetically() throws {
        let old = try Self.example()
        #expect(DraftChanges.between(old, old) == "nothing")
        var new = old
        new.name = LocalizedText("Sleep Better")
        new.languages = ["en"]
        #expect(DraftChanges.between(old, new) == "languages, name")
    }

    @Test func activitiesAreNamedByWhatHappenedToThem() throws {
        let old = try Self.example()
        try #require(old.activities.count >= 3)
        var new = old
        new.activities[0].title = LocalizedText("Morning check-in")
        let removed = new.activities.remove(at: 1)
        new.activities.append(StudyActivity(activityId: "extra", title: LocalizedText("Extra"), schedule: Schedule(frequency: .oneTime), steps: []))
        #expect(DraftChanges.between(old, new)
            == "activities (\(old.activities[0].activityId) changed, extra added, \(removed.activityId) removed)")

        var reordered = old
        reordered.activities.swapAt(0, 1)
        #expect(DraftChanges.between(old, reordered) == "activities (reordered)")
    }

    @Test func aLongListIsCutAndCounted() throws {
        let old = try Self.example()
        var new = old
        for index in 0..<15 { new.activities.append(StudyActivity(activityId: "a\(index)", title: LocalizedText("A"), schedule: Schedule(frequency: .oneTime), steps: [])) }
        let said = DraftChanges.between(old, new)
        #expect(said.hasPrefix("activities (a0 added, a1 added,"))
        #expect(said.hasSuffix("a9 added and 5 more)"))
    }
}
