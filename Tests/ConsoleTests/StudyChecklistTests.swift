import ConsoleCore
import Foundation
import JSONText
import StudyModels
import Testing

/// The check-list before publishing: each section's state from the draft, by the rules that
/// study-metadata applies when it freezes a version; no I/O.
@Suite struct StudyChecklistTests {
    static func example() throws -> StudyDocument {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")
        return try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: url))
    }

    static let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-19

    func checklist(_ change: (inout StudyDocument) -> Void = { _ in }) throws -> StudyChecklist {
        var document = try Self.example()
        change(&document)
        return StudyChecklist(document: document, sections: StudySection.all(apps: []), now: Self.now)
    }

    func state(_ list: StudyChecklist, _ slug: String) -> StudyChecklist.State? {
        list.items.first { $0.slug == slug }?.state
    }

    @Test func everySectionOfTheBuilderIsListedInItsOrder() throws {
        let list = try checklist()
        #expect(list.items.map(\.slug) == StudySection.all(apps: []).map(\.slug))
        #expect(list.items.count == 10)
        #expect(list.isReady)
        #expect(list.items.allSatisfy { $0.state == .complete }, "\(list.items.filter { $0.state != .complete })")
    }

    @Test func anOptionalSectionLeftEmptyIsNotUsed() throws {
        let list = try checklist { $0.resources = [] }
        #expect(state(list, "resources") == .unused)
        #expect(list.isReady)
    }

    @Test func whatPublishingWouldRefuseNeedsAttentionWithItsReason() throws {
        // An activity scheduled entirely in the past: Launch refuses it (PublishGuard).
        let list = try checklist { document in
            document.activities[0].schedule.endDate = "2020-01-31"
            document.activities[0].schedule.startDate = "2020-01-01"
        }
        #expect(state(list, "activities") == .attention)
        #expect(!list.isReady)
        let item = try #require(list.items.first { $0.slug == "activities" })
        #expect(item.reason?.contains("scheduled entirely in the past") == true, "\(item)")
        #expect(list.items.filter { $0.state == .attention }.count == 1)
    }

    /// An assessment the MyStudies apps cannot run goes to Sage's apps only: the list says so,
    /// with the first reason, and it does not stop publishing (a study may be for Sage's apps).
    @Test func aSageOnlyActivityIsToCheckWithWhyTheMyStudiesAppsNeverShowIt() throws {
        let list = try checklist { document in
            document.activities[1].assessment = SageAssessment(
                document: .object([:]), sageOnly: [ValidationProblem(pointer: "/steps/2", message: "a timed tapping step has no MyStudies task")])
        }
        #expect(state(list, "activities") == .check)
        let item = try #require(list.items.first { $0.slug == "activities" })
        #expect(item.reason == "\(try Self.example().activities[1].activityId) is Sage only: the MyStudies apps never show it (a timed tapping step has no MyStudies task)")
        #expect(list.isReady)
    }

    /// An activity imported on its own keeps the import's placeholder schedule until the team
    /// saves its page: the check-list asks for a schedule (a warning: it publishes as it is).
    @Test func anImportedActivityLeftWithItsPlaceholderScheduleIsToCheck() throws {
        let list = try checklist { document in
            document.activities[2].placeholderSchedule = true
            document.activities[2].schedule = Schedule(frequency: .ongoing)
        }
        let item = try #require(list.items.first { $0.slug == "activities" })
        #expect(item.state == .check)
        let id = try Self.example().activities[2].activityId
        #expect(item.reason == "\(id) still has the schedule its import gave it (always available): choose when participants get it on its page")
        #expect(list.isReady)
        #expect(try checklist { $0.activities[2].placeholderSchedule = false }.items.first { $0.slug == "activities" }?.state == .complete)
    }

    /// The team's own records (WCP's basic information) and the placeholder mark change no
    /// version: the apps are served neither.
    @Test func theTeamsOwnRecordsChangeNoVersion() throws {
        let published = try Self.example()
        var draft = published
        draft.fullName = LocalizedText("Sleep quality in shift workers")
        draft.supportEmail = "sleep@example.org"
        draft.estimatedDuration = StudyDuration(value: 3, unit: .months)
        draft.dataPartners = ["Example University"]
        draft.activities[0].placeholderSchedule = true
        #expect(!StudyDocumentDifference(from: published, to: draft).any)
        draft.activities[0].title = LocalizedText("Renamed")
        #expect(StudyDocumentDifference(from: published, to: draft).changedActivities == [published.activities[0].activityId])
    }

    @Test func aStudyWithoutActivitiesIsToCheck() throws {
        let list = try checklist { document in
            document.activities = []
            document.notifications = []
            document.dashboard = Dashboard()
            document.resources = []
        }
        #expect(state(list, "activities") == .check)
        #expect(list.items.first { $0.slug == "activities" }?.reason == "no activities yet: participants who join would have nothing to answer")
    }

    @Test func aWarningIsToCheckAndDoesNotStopPublishing() throws {
        let list = try checklist { $0.languages.append("fr") }
        #expect(state(list, "settings") == .check)
        #expect(list.items.first { $0.slug == "settings" }?.reason?.hasPrefix("French is switched on") == true)
        #expect(list.isReady)

        let stale = try checklist { document in
            document.notifications[0].timing = .scheduled
            document.notifications[0].at = "2026-01-01T09:00"
        }
        #expect(state(stale, "notifications") == .check)
        #expect(stale.items.first { $0.slug == "notifications" }?.reason?.contains("will not be sent") == true)
    }
}
