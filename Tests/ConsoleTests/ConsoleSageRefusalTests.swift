import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// The processing page lists the Sage archives the response service refused for their content
/// and kept (docs/sage.md, Refused archives), with why, and processes one again once the study is
/// mended: it is then stored, and the page says so.
@Suite(.needsCluster) struct ConsoleSageRefusalTests {
    /// A result archive of assessment `walk`, which CONSOLE1 has not published.
    static func walkArchive() -> [UInt8] {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(SageArchiveSamples.metadata(files: ["assessmentResult.json"]).utf8))
        zip.add("assessmentResult.json", Array(SageArchiveSamples.result(runId: "walk-1").replacingOccurrences(of: #""sleep""#, with: #""walk""#).utf8))
        return zip.bytes()
    }

    @Test func aRefusedArchiveIsListedWithWhyAndStoredOnceTheStudyHasItsActivity() async throws {
        try await ConsoleFixture.run(withPeers: true) { f in
            let peer = try #require(f.response)
            let token = try await ConsoleResponseDataTests.enroll(peer)
            let status = try await peer.client.execute(
                uri: "/sage/v1/studies/CONSOLE1/archives", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/zip"], body: ByteBuffer(bytes: Self.walkArchive())
            ) { $0.status }
            #expect(status == .unprocessableContent)
            try await f.browser.signIn(ConsoleFixture.rootEmail, ConsoleFixture.rootPassword)

            let page = try await f.browser.get("/studies/CONSOLE1/processing")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"id="refused-archives""#))
            #expect(page.html.contains("Study CONSOLE1 has no published activity walk, which the archive answers."), "\(page.html)")
            #expect(page.html.contains("Kept, not stored"))
            let refusalId = try #require(
                page.html.components(separatedBy: #"<tr data-refusal=""#).dropFirst().first.map { String($0.prefix { $0 != "\"" }) })
            let csrf = try #require(page.input("csrf"))

            // Still not mended: the page says why, in the response service's words.
            let early = try await f.browser.post("/studies/CONSOLE1/processing/sage/\(refusalId)/reprocess", [("csrf", csrf)])
            #expect(early.status == .unprocessableContent)
            #expect(early.html.contains("no published activity walk"), "\(early.html)")

            // The study publishes walk (as its next version's event would say), and the archive is stored.
            try await peer.postgres.query(
                """
                UPDATE studies SET event = jsonb_set(event, '{activities}', (event->'activities')
                    || '[{"activityId": "walk", "version": 1, "label": "1.0", "type": "questionnaire"}]'::jsonb)
                WHERE study_key = 'CONSOLE1'
                """, logger: Logger(label: "test"))
            let done = try await f.browser.post("/studies/CONSOLE1/processing/sage/\(refusalId)/reprocess", [("csrf", csrf)])
            #expect(done.status == .seeOther, "\(done.html)")
            #expect(done.location == "/studies/CONSOLE1/processing?done=sage#refused-archives")
            let after = try await f.browser.get("/studies/CONSOLE1/processing?done=sage")
            #expect(after.html.contains("The Sage archive is stored now"))
            #expect(after.html.contains("Stored after reprocessing"))
            #expect(!after.html.contains("/processing/sage/\(refusalId)/reprocess"), "no button for what is stored")
            var stored = 0
            for try await count in try await peer.postgres.query(
                "SELECT count(*)::int FROM sage_archives WHERE assessment_id = 'walk'", logger: Logger(label: "test")
            ).decode(Int.self) { stored = count }
            #expect(stored == 1)
        }
    }
}
