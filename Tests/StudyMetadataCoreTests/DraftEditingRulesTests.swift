import Foundation
import InMemoryPorts
import StudyMetadataCore
import StudyModels
import Testing

/// `DraftEditing` against in-memory drafts: who may write a draft, the preconditions of a save,
/// what stays fixed once a study is published and launched, edits checked as a whole study, and
/// every refusal leaving the draft, its revision and the audit log as they were.
@Suite struct DraftEditingRulesTests {
    static let exampleURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")
    static let now = ISO8601DateFormatter().date(from: "2026-12-01T12:00:00Z")!
    /// As her session reads her after she made the studies the tests make.
    static let ana = AuthenticatedAdmin(
        id: UUID(), email: "ana@example.org", role: .admin,
        studyRoles: ["SLEEPWELL": .studyAdmin, "SCHEMA1": .studyAdmin, "NEWSTUDY": .studyAdmin], tokenHash: "h1")
    static let root = AuthenticatedAdmin(id: UUID(), email: "root@example.org", role: .superAdmin, studyRoles: [:], tokenHash: "h2")
    static let viewer = AuthenticatedAdmin(
        id: UUID(), email: "vic@example.org", role: .admin, studyRoles: ["SLEEPWELL": .viewer], tokenHash: "h3")
    static let editor = AuthenticatedAdmin(
        id: UUID(), email: "ed@example.org", role: .admin, studyRoles: ["SLEEPWELL": .editor], tokenHash: "h4")

    struct Fixture {
        let drafts = InMemoryDrafts()
        let apps = InMemoryApps()
        var editing: DraftEditing { DraftEditing(transactions: drafts, studies: drafts, apps: apps) }

        init() async throws {
            for appId in ["DEMOAPP", "OTHERAPP"] {
                _ = try await apps.create(AppDefinition(appId: appId, orgId: "ORG", name: "Sleep", kind: .standalone), by: "root")
            }
        }

        func example() throws -> StudyDocument {
            try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: DraftEditingRulesTests.exampleURL))
        }

        /// Saves `document` as `admin` expecting `expecting`.
        @discardableResult
        func save(
            _ document: StudyDocument, by admin: AuthenticatedAdmin = DraftEditingRulesTests.ana,
            expecting: StudyStore.DraftPrecondition = .none
        ) async throws -> DraftSaved {
            let access = try await editing.authorize(admin, studyId: document.studyId)
            return try await editing.save(document, with: access, expecting: expecting, now: DraftEditingRulesTests.now)
        }

        func refusal(_ body: () async throws -> Void) async -> StudyMetadataError? {
            do {
                try await body()
                return nil
            } catch {
                return error as? StudyMetadataError
            }
        }

        /// The study's revision and the number of audit events: what a refusal must leave.
        var footprint: [Int] { [drafts.state.studies["SLEEPWELL"]?.revision ?? 0, drafts.state.events.count] }
    }

    @Test func aNewStudyMakesItsCreatorItsStudyAdminUnlessTheyAreASuperAdmin() async throws {
        let fixture = try await Fixture()
        let saved = try await fixture.save(try fixture.example(), expecting: .absent)
        #expect(saved.created)
        #expect(fixture.drafts.state.studyAdmins.count == 1)
        #expect(fixture.drafts.state.studyAdmins.first?.0 == Self.ana.id)
        #expect(fixture.drafts.state.events.map(\.action) == ["study.created"])

        let other = try await Fixture()
        try await other.save(try other.example(), by: Self.root)
        #expect(other.drafts.state.studyAdmins.isEmpty)
    }

    @Test func aSaveFindsWhatItExpectedOrChangesNothing() async throws {
        let fixture = try await Fixture()
        var document = try fixture.example()
        try await fixture.save(document)
        let before = fixture.footprint
        document.tagline = "Sleep better"
        #expect(await fixture.refusal { try await fixture.save(document, expecting: .revision(7)) }
            == .draftChanged(studyId: "SLEEPWELL", current: 1))
        #expect(await fixture.refusal { try await fixture.save(document, expecting: .absent) } == .studyExists(studyId: "SLEEPWELL"))
        #expect(fixture.footprint == before)
        let saved = try await fixture.save(document, expecting: .revision(1))
        #expect(!saved.created)
        #expect(fixture.drafts.state.studies["SLEEPWELL"]?.revision == 2)
        #expect(fixture.drafts.state.events.last?.action == "study.draft_saved")
        #expect(fixture.drafts.state.events.last?.details["changed"]?.isEmpty == false)
        // A revision expected of a study that does not exist is refused as revision 0.
        var other = document
        other.studyId = "NEWSTUDY"
        #expect(await fixture.refusal { try await fixture.save(other, expecting: .revision(1)) }
            == .draftChanged(studyId: "NEWSTUDY", current: 0))
        #expect(!(try await fixture.drafts.exists(studyId: "NEWSTUDY")))
    }

    @Test func aStudyIdTakenInAnotherCaseIsNamed() async throws {
        let fixture = try await Fixture()
        try await fixture.save(try fixture.example())
        var document = try fixture.example()
        document.studyId = "SleepWell"
        #expect(await fixture.refusal { try await fixture.save(document) } == .studyIdTaken(studyId: "SleepWell", existing: "SLEEPWELL"))
        #expect(fixture.drafts.state.studies.count == 1)
    }

    @Test func onlyAnEditorWritesAnExistingStudyAndAnyoneSignedInStartsOne() async throws {
        let fixture = try await Fixture()
        let fresh = try await fixture.editing.authorize(Self.viewer, studyId: "SLEEPWELL")
        #expect(!fresh.studyExists)
        try await fixture.save(try fixture.example())
        #expect(await fixture.refusal { _ = try await fixture.editing.authorize(Self.viewer, studyId: "SLEEPWELL") }
            == .editorRequired(studyId: "SLEEPWELL"))
        #expect(try await fixture.editing.authorize(Self.editor, studyId: "SLEEPWELL").studyExists)
    }

    @Test func aPublishedStudysAppAndALaunchedStudysEligibilityStay() async throws {
        let fixture = try await Fixture()
        var document = try fixture.example()
        try await fixture.save(document)
        try await fixture.drafts.publish("SLEEPWELL", status: .active)
        let before = fixture.footprint
        var moved = document
        moved.appId = "OTHERAPP"
        guard case .invalid(let appProblems, _) = await fixture.refusal({ try await fixture.save(moved) }) else {
            Issue.record("a published study moved to another app")
            return
        }
        #expect(appProblems.map(\.pointer) == ["/appId"])
        document.eligibility.type = .test
        guard case .invalid(let eligibilityProblems, _) = await fixture.refusal({ try await fixture.save(document) }) else {
            Issue.record("a launched study changed its eligibility type")
            return
        }
        #expect(eligibilityProblems.map(\.pointer) == ["/eligibility/type"])
        #expect(fixture.footprint == before)
    }

    @Test func aClosedStudysDraftNoLongerChanges() async throws {
        let fixture = try await Fixture()
        var document = try fixture.example()
        try await fixture.save(document)
        try await fixture.drafts.publish("SLEEPWELL", status: .deactivated)
        let before = fixture.footprint
        document.tagline = "Closed"
        #expect(await fixture.refusal { try await fixture.save(document) } == .closed(studyId: "SLEEPWELL"))
        let edited = await fixture.refusal {
            _ = try await fixture.editing.edit(studyId: "SLEEPWELL", by: Self.ana, action: "study.edited", madeFrom: "test") { draft in
                draft.tagline = "Closed"
            }
        }
        #expect(edited == .closed(studyId: "SLEEPWELL"))
        #expect(fixture.footprint == before)
    }

    @Test func aDocumentForAnotherStudyOrAnUnknownAppIsRefusedWithEachProblem() async throws {
        let fixture = try await Fixture()
        var document = try fixture.example()
        document.appId = "NOSUCHAPP"
        let access = try await fixture.editing.authorize(Self.ana, studyId: "OTHERSTUDY")
        let refusal = await fixture.refusal { _ = try await fixture.editing.save(document, with: access, expecting: .none, now: Self.now) }
        guard case .invalid(let problems, subject: .studyDocument) = refusal else {
            Issue.record("not refused as an invalid document: \(String(describing: refusal))")
            return
        }
        #expect(problems.map(\.pointer) == ["/studyId", "/appId"])
        #expect(fixture.drafts.state.studies.isEmpty)
    }

    @Test func anEditIsCheckedAsAWholeStudyAndOneThatChangesNothingWritesNothing() async throws {
        let fixture = try await Fixture()
        try await fixture.save(try fixture.example())
        let before = fixture.footprint
        let unchanged = try await fixture.editing.edit(studyId: "SLEEPWELL", by: Self.ana, action: "study.edited", madeFrom: "test") { _ in 1 }
        #expect(unchanged.made == 1)
        #expect(fixture.footprint == before, "no revision, no event")
        let broken = await fixture.refusal {
            _ = try await fixture.editing.edit(studyId: "SLEEPWELL", by: Self.ana, action: "study.edited", madeFrom: "test") { draft in
                draft.activities[1].activityId = draft.activities[0].activityId
            }
        }
        guard case .invalid(let problems, subject: .draftMadeFrom("test")) = broken else {
            Issue.record("a duplicate activity id was not refused: \(String(describing: broken))")
            return
        }
        #expect(!problems.isEmpty)
        #expect(fixture.footprint == before)
        _ = try await fixture.editing.edit(
            studyId: "SLEEPWELL", by: Self.ana, action: "study.edited", details: ["why": "test"], madeFrom: "test"
        ) { draft in draft.tagline = "Edited" }
        #expect(try fixture.drafts.document("SLEEPWELL")?.tagline == "Edited")
        #expect(fixture.drafts.state.events.last?.action == "study.edited")
        #expect(fixture.drafts.state.events.last?.details["why"] == "test")
        #expect(await fixture.refusal {
            _ = try await fixture.editing.edit(studyId: "NOSUCH", by: Self.ana, action: "study.edited", madeFrom: "test") { _ in () }
        } == .noStudy("NOSUCH"))
    }

    @Test func anActivityIsSavedIntoTheDraftWithItsProblemsLocatedInIt() async throws {
        let fixture = try await Fixture()
        let document = try fixture.example()
        try await fixture.save(document)
        var activity = document.activities[0]
        activity.title = "Daily, renamed"
        let renamed = activity
        let saved = try await fixture.editing.saveActivity(studyId: "SLEEPWELL", activityId: activity.activityId, by: Self.ana) { _ in renamed }
        #expect(!saved.created)
        #expect(try fixture.drafts.document("SLEEPWELL")?.activities[0].title == "Daily, renamed")
        // The first step twice: two steps by one key.
        var doubled = activity
        doubled.steps.append(activity.steps[0])
        let empty = doubled
        let refusal = await fixture.refusal {
            _ = try await fixture.editing.saveActivity(studyId: "SLEEPWELL", activityId: activity.activityId, by: Self.ana) { _ in empty }
        }
        guard case .invalid(let problems, subject: .activity) = refusal else {
            Issue.record("an activity with a step key twice was not refused in the activity: \(String(describing: refusal))")
            return
        }
        #expect(problems.contains { $0.pointer.hasPrefix("/activity/") }, "\(problems)")
    }
}
