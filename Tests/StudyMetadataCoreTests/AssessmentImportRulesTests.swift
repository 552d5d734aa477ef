import Foundation
import InMemoryPorts
import JSONText
import SageAssessments
import StudyMetadataCore
import StudyModels
import Testing

/// `AssessmentImports` against in-memory drafts, with Sage's own example assessment: made into an
/// activity, replaced by a second import, read back as imported; never put in place of an
/// activity that was not made from one, and refused at its identifier.
@Suite struct AssessmentImportRulesTests {
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    static let assessmentURL = tests.appendingPathComponent("Fixtures/sage/examples/v2/AssessmentObject/AssessmentObject_0.json")
    static let studyURL = tests.deletingLastPathComponent().appendingPathComponent("docs/examples/complete-study.json")
    static let ana = AuthenticatedAdmin(id: UUID(), email: "ana@example.org", role: .admin, studyRoles: [:], tokenHash: "h1")

    static func fixture() async throws -> (InMemoryDrafts, AssessmentImports) {
        let drafts = InMemoryDrafts()
        let apps = InMemoryApps()
        _ = try await apps.create(AppDefinition(appId: "DEMOAPP", orgId: "ORG", name: "Demo", kind: .standalone), by: "root")
        let editing = DraftEditing(transactions: drafts, studies: drafts, apps: apps)
        let study = try JSONDecoder().decode(StudyDocument.self, from: Data(contentsOf: studyURL))
        _ = try await editing.save(
            study, with: try await editing.authorize(ana, studyId: study.studyId), expecting: .absent,
            now: ISO8601DateFormatter().date(from: "2026-12-01T12:00:00Z")!)
        return (drafts, AssessmentImports(editing: editing, schemas: try SageSchemaSet.bundled()))
    }

    @Test func anAssessmentBecomesAnActivityAndASecondImportReplacesIt() async throws {
        let (drafts, imports) = try await Self.fixture()
        let bytes = Array(try Data(contentsOf: Self.assessmentURL))
        let first = try await imports.importAssessment(bytes, identifier: "assessment", studyId: "SLEEPWELL", by: Self.ana)
        #expect(first.created)
        let count = try #require(try drafts.document("SLEEPWELL")?.activities.count)
        let second = try await imports.importAssessment(bytes, identifier: "assessment", studyId: "SLEEPWELL", by: Self.ana)
        #expect(!second.created)
        #expect(try drafts.document("SLEEPWELL")?.activities.count == count)
        let kept = try #require(try await imports.assessment(studyId: "SLEEPWELL", identifier: "assessment"))
        #expect(kept == (try JSONValue.parse(bytes, budget: .activityDocument)))
        #expect(drafts.state.events.map(\.action) == ["study.created", "study.assessment_imported"],
                "the second import changed nothing, so it wrote nothing")
    }

    @Test func anActivityNotMadeFromAnAssessmentIsNeverReplaced() async throws {
        let (drafts, imports) = try await Self.fixture()
        var bytes = try Data(contentsOf: Self.assessmentURL)
        bytes = Data(String(decoding: bytes, as: UTF8.self)
            .replacingOccurrences(of: "\"identifier\" : \"assessment\"", with: "\"identifier\" : \"daily\"", options: [], range: nil).utf8)
        let before = try drafts.document("SLEEPWELL")
        await #expect(throws: StudyMetadataError.activityNotFromAssessment(activityId: "daily")) {
            _ = try await imports.importAssessment(Array(bytes), identifier: "daily", studyId: "SLEEPWELL", by: Self.ana)
        }
        #expect(try drafts.document("SLEEPWELL") == before)
    }

    @Test func anAssessmentForAnotherIdentifierOrNotJSONIsRefusedAtItsPlace() async throws {
        let (drafts, imports) = try await Self.fixture()
        let bytes = Array(try Data(contentsOf: Self.assessmentURL))
        let refusal: StudyMetadataError?
        do {
            _ = try await imports.importAssessment(bytes, identifier: "other", studyId: "SLEEPWELL", by: Self.ana)
            refusal = nil
        } catch { refusal = error as? StudyMetadataError }
        guard case .invalid(let problems, subject: .assessment) = refusal else {
            Issue.record("an identifier unlike the address's was not refused: \(String(describing: refusal))")
            return
        }
        #expect(problems.first?.pointer == "/identifier")
        await #expect(throws: StudyMetadataError.self) {
            _ = try await imports.importAssessment(Array("{".utf8), identifier: "assessment", studyId: "SLEEPWELL", by: Self.ana)
        }
        #expect(drafts.state.events.map(\.action) == ["study.created"])
    }
}
