import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// The manual check-list before launch: every item listed in the WCP's order, ticked by editors
/// with who and when kept, unticked, audited; bad ticks and a viewer's change nothing.
@Suite struct StudyChecklistAPITests {
    let helper = MetadataAdmin()

    func state(_ body: ByteBuffer) throws -> StudyChecklistState {
        try JSONDecoder.iso8601.decode(StudyChecklistState.self, from: Data(buffer: body))
    }

    func ticks(_ client: some TestClientProtocol, _ token: String, _ items: [String], study: String = "SLEEPWELL")
        async throws -> (HTTPResponse.Status, ByteBuffer)
    {
        let body = String(decoding: try JSONEncoder().encode(StudyChecklistTicks(ticked: items)), as: UTF8.self)
        return try await helper.send(client, .put, "/admin/v1/studies/\(study)/checklist", token: token, body: body)
    }

    @Test(.needsCluster) func editorsTickTheListAndWhoTickedEachItemIsKept() async throws {
        try await helper.withService { client, root, url in
            _ = try await helper.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
            let (editorId, editor) = try await helper.makeAdmin(client, root: root, email: "editor@studystack.test")
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/roles/\(editorId)", token: root, body: #"{"role":"editor"}"#)
            let (viewerId, viewer) = try await helper.makeAdmin(client, root: root, email: "viewer@studystack.test")
            _ = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/roles/\(viewerId)", token: root, body: #"{"role":"viewer"}"#)

            // A new study: every item, in the WCP's order, none ticked.
            let (read, readBody) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/checklist", token: viewer)
            #expect(read == .ok)
            let empty = try state(readBody)
            try #require(empty.items.count == 11)
            #expect(empty.items.map(\.item) == LaunchChecklist.items.map(\.id))
            #expect(empty.items.first?.title == "IRB review completed")
            #expect(empty.tickedCount == 0)

            // The editor ticks two; the root admin a third later, keeping the editor's two.
            let (ticked, tickedBody) = try await ticks(client, editor, ["irbApproval", "consentReviewed"])
            #expect(ticked == .ok)
            let first = try state(tickedBody)
            #expect(first.tickedCount == 2)
            let irb = try #require(first.items.first { $0.item == "irbApproval" })
            #expect(irb.ticked && irb.tickedBy == "editor@studystack.test")
            let irbAt = try #require(irb.tickedAt)
            #expect(abs(irbAt.timeIntervalSinceNow) < 600)
            let (_, secondBody) = try await ticks(client, root, ["consentReviewed", "irbApproval", "appTested"])
            let second = try state(secondBody)
            #expect(second.tickedCount == 3)
            #expect(second.items.first { $0.item == "irbApproval" }?.tickedBy == "editor@studystack.test", "kept, not ticked again")
            #expect(second.items.first { $0.item == "irbApproval" }?.tickedAt == irbAt)
            #expect(second.items.first { $0.item == "appTested" }?.tickedBy == MetadataAdmin.adminEmail)

            // Refused, nothing changed: an unknown item, one named twice, one whose letters are
            // another's in another case or with a space, a body that is not the list, a viewer, no study.
            for bad in [["irbApproval", "pizza"], ["appTested", "appTested"], ["IRBAPPROVAL"], ["irbApproval "]] {
                let (status, body) = try await ticks(client, editor, bad)
                #expect(status == .unprocessableContent, "\(bad)")
                #expect(String(buffer: body).contains("/ticked/"), "\(bad)")
            }
            let (notJSON, _) = try await helper.send(client, .put, "/admin/v1/studies/SLEEPWELL/checklist", token: editor, body: #"{"ticked":"irbApproval"}"#)
            #expect(notJSON == .unprocessableContent)
            #expect(try await ticks(client, viewer, []).0 == .forbidden)
            #expect(try await ticks(client, root, [], study: "NOSTUDY").0 == .notFound)
            let (_, afterBody) = try await helper.send(client, .get, "/admin/v1/studies/SLEEPWELL/checklist", token: editor)
            #expect(try state(afterBody) == second)

            // Unticking: the item loses who ticked it.
            let (_, thirdBody) = try await ticks(client, editor, ["irbApproval", "appTested"])
            let third = try state(thirdBody)
            #expect(third.tickedCount == 2)
            let consent = try #require(third.items.first { $0.item == "consentReviewed" })
            #expect(!consent.ticked && consent.tickedBy == nil && consent.tickedAt == nil)
            // Saving the same ticks again changes nothing, and is not audited again.
            #expect(try await ticks(client, editor, ["appTested", "irbApproval"]).0 == .ok)

            try await TestDatabase.withClient(url: url) { postgres, logger in
                let rows = try await postgres.query(
                    """
                    SELECT action, actor, details->>'item' FROM audit_events
                    WHERE action LIKE 'study.checklist_%' AND study_id = 'SLEEPWELL' ORDER BY id
                    """, logger: logger)
                let events = try await rows.decode((String, String, String).self).collect()
                try #require(events.count == 4)
                #expect(events.map(\.0) == ["study.checklist_ticked", "study.checklist_ticked", "study.checklist_ticked", "study.checklist_unticked"])
                #expect(events[3].1 == "editor@studystack.test" && events[3].2 == "consentReviewed")
            }
        }
    }
}
