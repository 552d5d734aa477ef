import Foundation
import InMemoryPorts
import StudyMetadataCore
import StudyModels
import Testing

/// `SchemaProtocolImports` against in-memory drafts: the schema project's demo protocol makes a
/// new study, a second import takes the existing study's draft, and a new study the request
/// does not say enough about is refused with nothing made.
@Suite struct SchemaProtocolImportRulesTests {
    static let protocolURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/schema/demo_protocol.json")
    /// As her session reads her after she made the studies the tests make.
    static let ana = AuthenticatedAdmin(
        id: UUID(), email: "ana@example.org", role: .admin,
        studyRoles: ["SLEEPWELL": .studyAdmin, "SCHEMA1": .studyAdmin, "NEWSTUDY": .studyAdmin], tokenHash: "h1")

    static func imports() async throws -> (InMemoryDrafts, SchemaProtocolImports) {
        let drafts = InMemoryDrafts()
        let apps = InMemoryApps()
        _ = try await apps.create(AppDefinition(appId: "DEMOAPP", orgId: "ORG", name: "Demo", kind: .standalone), by: "root")
        return (drafts, SchemaProtocolImports(editing: DraftEditing(transactions: drafts, studies: drafts, apps: apps)))
    }

    @Test func theDemoProtocolMakesAStudyAndASecondImportTakesItsDraft() async throws {
        let (drafts, imports) = try await Self.imports()
        let bytes = Array(try Data(contentsOf: Self.protocolURL))
        let editing = imports.editing
        let created = try await imports.importProtocol(
            bytes, into: try await editing.authorize(Self.ana, studyId: "SCHEMA1"), assignment: nil,
            newStudy: .init(appId: "DEMOAPP", timeZone: "Australia/Melbourne"))
        #expect(created.created)
        #expect(!created.activities.isEmpty)
        let document = try #require(try drafts.document("SCHEMA1"))
        #expect(document.activities.map(\.activityId) == created.activities)
        #expect(document.timeZone == "Australia/Melbourne")
        #expect(drafts.state.events.map(\.action) == ["study.created"])

        let again = try await imports.importProtocol(
            bytes, into: try await editing.authorize(Self.ana, studyId: "SCHEMA1"), assignment: nil,
            newStudy: .init(appId: nil, timeZone: "UTC"))
        #expect(!again.created)
        #expect(drafts.state.studies.count == 1)
        #expect(try drafts.document("SCHEMA1")?.timeZone == "Australia/Melbourne", "an existing study keeps its zone")
    }

    @Test func aNewStudyWithoutAnAppOrAZoneIsRefusedAndNothingIsMade() async throws {
        let (drafts, imports) = try await Self.imports()
        let bytes = Array(try Data(contentsOf: Self.protocolURL))
        let access = try await imports.editing.authorize(Self.ana, studyId: "SCHEMA1")
        await #expect(throws: StudyMetadataError.self) {
            _ = try await imports.importProtocol(bytes, into: access, assignment: nil, newStudy: .init(appId: nil, timeZone: "Mars/Olympus"))
        }
        await #expect(throws: StudyMetadataError.self) {
            _ = try await imports.importProtocol(Array("{}".utf8), into: access, assignment: nil, newStudy: .init(appId: "DEMOAPP", timeZone: "UTC"))
        }
        #expect(drafts.state.studies.isEmpty)
        #expect(drafts.state.events.isEmpty)
    }
}
