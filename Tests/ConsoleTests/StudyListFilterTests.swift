import ConsoleCore
import Foundation
import StudyModels
import Testing

/// The studies page's search and filters; no I/O.
@Suite struct StudyListFilterTests {
    static func study(_ id: String, _ name: String, _ status: StudyStatus) -> StudySummary {
        StudySummary(
            studyId: id, appId: "APP", name: name, status: status, draftUpdatedAt: Date(timeIntervalSince1970: 0),
            draftUpdatedBy: "a@example.org", draftRevision: 1)
    }

    static let studies = [
        study("SLEEP1", "Sleep Well", .active), study("MOOD", "Mood diary", .preLaunch), study("OLDSLEEP", "Sleep pilot", .deactivated),
        study("PAUSED", "Steps", .paused),
    ]

    func ids(search: String? = nil, status: String? = nil, closed: String? = nil) -> [String] {
        StudyListFilter(search: search, status: status, closed: closed).apply(Self.studies).map(\.studyId)
    }

    @Test func closedStudiesAreHiddenUntilAskedFor() {
        #expect(ids() == ["SLEEP1", "MOOD", "PAUSED"])
        #expect(ids(closed: "1") == ["SLEEP1", "MOOD", "OLDSLEEP", "PAUSED"])
        #expect(ids(status: "deactivated") == ["OLDSLEEP"], "asking for closed ones shows them")
        #expect(!StudyListFilter(search: nil, status: nil, closed: nil).isFiltering)
    }

    @Test func theSearchMatchesNameOrIdWhateverTheCase() {
        #expect(ids(search: "sleep") == ["SLEEP1"])
        #expect(ids(search: " SLEEP ", closed: "1") == ["SLEEP1", "OLDSLEEP"])
        #expect(ids(search: "diary") == ["MOOD"])
        #expect(ids(search: "nothing like it").isEmpty)
    }

    @Test func aStatusNarrowsAndAnUnknownOneIsAny() {
        #expect(ids(status: "active") == ["SLEEP1"])
        #expect(ids(status: "pre_launch") == ["MOOD"])
        #expect(ids(status: "bogus") == ["SLEEP1", "MOOD", "PAUSED"])
    }

    @Test func aLongSearchIsCutNotRefused() {
        let filter = StudyListFilter(search: String(repeating: "é", count: 500), status: nil, closed: nil)
        #expect(filter.search.unicodeScalars.count == StudyListFilter.maxSearch)
        #expect(filter.apply(Self.studies).isEmpty)
    }
}
