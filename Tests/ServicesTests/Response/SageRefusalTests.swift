import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// Keep first, judge after (docs/sage.md, Refused archives): an archive refused for its content
/// is kept as it arrived, with why, listed to the study's team, and stored exactly once when it
/// is reprocessed after the study is mended. Sage's clients delete their copy whatever the
/// server answers, so before this a refused archive was gone.
@Suite(.needsCluster) struct SageRefusalTests {
    let admin = ResponseAdmin()
    let sage = SageArchiveFixture()

    /// An archive of `walk`, an assessment the study has not published yet.
    static func walkArchive() -> [UInt8] {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(SageArchiveFixture.metadata(files: ["assessmentResult.json"]).utf8))
        zip.add("assessmentResult.json", Array(SageArchiveFixture.result(runId: "walk-run-1").replacingOccurrences(of: #""sleep""#, with: #""walk""#).utf8))
        return zip.bytes()
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    func refused(_ client: some TestClientProtocol, token: String) async throws -> [SageRefusedArchive] {
        let (status, body, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/sage/refused", token: token)
        #expect(status == .ok, "\(body)")
        return try Self.decoder().decode(SageRefusedArchiveList.self, from: Data(body.utf8)).refused
    }

    static let sleep = StudyEvent.ActivityVersion(activityId: "sleep", version: 1, label: "1.0", type: "questionnaire")

    /// SLEEPWELL announced with its activity `sleep` only, and a participant enrolled: their app token.
    static func enrolInSleepwell(_ h: ResponseHarness) async throws -> String {
        #expect(try await h.studyEvent("SLEEPWELL", version: 2, activities: [sleep]) == .ok)
        let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
        return try #require(enrolled["data"]?["appToken"]?.text)
    }

    @Test func anArchiveForAnActivityNotYetPublishedIsKeptAndStoredOnceTheStudyHasIt() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let appToken = try await Self.enrolInSleepwell(h)
            let archive = Self.walkArchive()

            // Refused as before: the client's answer does not change.
            let (status, reply) = try await sage.post(h, archive, appToken: appToken, study: "SLEEPWELL")
            #expect(status == .unprocessableContent, "\(reply)")
            #expect(reply.serialized().contains("no published activity walk"))
            // ... but kept, with why.
            var kept = try await refused(client, token: root)
            try #require(kept.count == 1)
            #expect(kept[0].door == "archives")
            #expect(kept[0].bytes == archive.count)
            #expect(kept[0].sha256 == SHA256.hash(data: archive).map { String(format: "%02x", $0) }.joined())
            #expect(kept[0].reason.contains("no published activity walk"), "\(kept[0].reason)")
            #expect(kept[0].problems.map(\.pointer) == ["/assessmentIdentifier"])
            #expect(kept[0].timesRefused == 1)
            #expect(kept[0].archiveId == nil)
            let refusalId = kept[0].refusalId
            // The same bytes again (the client retried): one item, counted twice.
            #expect(try await sage.post(h, archive, appToken: appToken, study: "SLEEPWELL").0 == .unprocessableContent)
            kept = try await refused(client, token: root)
            #expect(kept.count == 1)
            #expect(kept.first?.timesRefused == 2)
            // Downloaded as it arrived.
            let download = try await client.execute(
                uri: "/admin/v1/studies/SLEEPWELL/sage/refused/\(refusalId)", method: .get, headers: [.authorization: "Bearer \(root)"]
            ) { ($0.status, Array(buffer: $0.body)) }
            #expect(download.0 == .ok)
            #expect(download.1 == archive)

            // Reprocessed before the study is mended: refused again, still kept.
            let early = try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/sage/refused/\(refusalId)/reprocess", token: root)
            #expect(early.0 == .unprocessableContent, "\(early.1)")
            #expect(early.1.contains("no published activity walk"))
            #expect(try await refused(client, token: root).first?.timesRefused == 3)
            #expect(try await sage.count(h, "sage_archives") == 0)

            // The study publishes walk; reprocessed, the archive is stored, once.
            let walk = StudyEvent.ActivityVersion(activityId: "walk", version: 1, label: "1.0", type: "questionnaire")
            #expect(try await h.studyEvent("SLEEPWELL", version: 3, activities: [Self.sleep, walk]) == .ok)
            let (stored, storedBody, _) = try await admin.send(
                client, .post, "/admin/v1/studies/SLEEPWELL/sage/refused/\(refusalId)/reprocess", token: root)
            #expect(stored == .ok, "\(storedBody)")
            let receipt = try Self.decoder().decode(SageReprocessed.self, from: Data(storedBody.utf8))
            #expect(receipt.refusalId == refusalId)
            kept = try await refused(client, token: root)
            #expect(kept.first?.archiveId == receipt.archiveId)
            #expect(kept.first?.reprocessedAt != nil)
            // Asked again: the same archive, nothing more stored.
            let again = try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/sage/refused/\(refusalId)/reprocess", token: root)
            #expect(again.0 == .ok)
            #expect(try Self.decoder().decode(SageReprocessed.self, from: Data(again.1.utf8)).archiveId == receipt.archiveId)
            #expect(try await sage.count(h, "sage_archives") == 1)
            #expect(try await sage.count(h, "responses WHERE activity_id = 'walk'") == 1)
            // The client sending the same run once more is now a replay of the stored archive.
            let (replayed, replay) = try await sage.post(h, archive, appToken: appToken, study: "SLEEPWELL")
            #expect(replayed == .ok, "\(replay)")
            #expect(replay["archiveId"]?.string == receipt.archiveId)
            #expect(try await sage.count(h, "sage_archives") == 1)

            var audited: [String] = []
            for try await action in try await postgres.query(
                "SELECT action FROM audit_events WHERE action LIKE 'sage.%' ORDER BY id", logger: Logger(label: "test")
            ).decode(String.self) { audited.append(action) }
            #expect(audited == [
                "sage.archive_refused", "sage.archive_refused", "sage.refused_archive_downloaded", "sage.archive_received",
                "sage.archive_reprocessed",
            ])
        }
    }

    /// A replica remembers a token it admitted a moment ago. A participant who has just withdrawn
    /// with deletion, and whose next archive that replica still reads and refuses, leaves nothing
    /// kept: what they send after leaving is not theirs to keep.
    @Test func aParticipantWhoWithdrewWithDeletionLeavesNoRefusedArchiveBehind() async throws {
        try await ResponseHarness.run { h in
            try await sage.announce(h)
            let appToken = try await sage.enroll(h)
            // Admitted, and remembered by this replica, with an archive it refuses and keeps.
            #expect(try await sage.post(h, Self.walkArchive(), appToken: appToken).0 == .unprocessableContent)
            #expect(try await sage.count(h, "sage_refused_archives") == 1)
            let (status, _, _) = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": appToken, "delete": "true"])
            #expect(status == .ok)
            #expect(try await sage.count(h, "sage_refused_archives") == 0, "deleted with the rest of their data")
            // Within the replica's memory of the token, another archive it refuses: nothing kept.
            var other = ZipWriter()
            other.add("assessmentResult.json", Array(SageArchiveFixture.result(runId: "after").utf8))
            #expect(try await sage.post(h, other.bytes(), appToken: appToken).0 == .unprocessableContent)
            #expect(try await sage.count(h, "sage_refused_archives") == 0)
            #expect(try await sage.count(h, "audit_events WHERE action = 'sage.archive_refused'") == 1)
        }
    }

    /// Bridge's handshake: the archive is put, then `complete` refuses it for its content
    /// (`validation_failed`, which the client ignores); it is kept as it was put.
    @Test func anArchiveRefusedOnCompleteIsKeptAsItWasPut() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let appToken = try await Self.enrolInSleepwell(h)
            var noManifest = ZipWriter()
            noManifest.add("assessmentResult.json", Array(SageArchiveFixture.result(runId: "r").utf8))
            let archive = noManifest.bytes()

            let uploads = SageUploadTests()
            let opened = try await uploads.send(h, .post, "/v3/uploads", appToken: appToken, json: SageUploadTests.request(archive))
            #expect(opened.status == .created, "\(opened.body)")
            let url = try SageUploadTests.path(try #require(opened.body["url"]?.string))
            let id = try #require(opened.body["id"]?.string)
            #expect(try await uploads.send(h, .put, url, bytes: archive, headers: SageUploadTests.putHeaders(archive)).status == .ok)
            let completed = try await uploads.send(h, .post, "/v3/uploads/\(id)/complete", appToken: appToken)
            #expect(completed.status == .ok)
            #expect(completed.body["status"] == .string("validation_failed"), "\(completed.body)")

            let kept = try await refused(client, token: root)
            try #require(kept.count == 1)
            #expect(kept[0].door == "upload")
            #expect(kept[0].bytes == archive.count)
            #expect(kept[0].reason.contains("metadata.json"), "\(kept[0].reason)")
            // Not mendable by the study: reprocessing refuses it again, and it stays kept.
            let again = try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/sage/refused/\(kept[0].refusalId)/reprocess", token: root)
            #expect(again.0 == .unprocessableContent, "\(again.1)")
            #expect(try await refused(client, token: root).count == 1)
            // Bad ids: nothing to find.
            #expect(try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/sage/refused/\(UUID().uuidString)/reprocess", token: root).0 == .notFound)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/sage/refused/not-a-uuid", token: root).0 == .notFound)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/sage/refused?limit=0", token: root).0 == .badRequest)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/sage/refused", token: nil).0 == .unauthorized)
        }
    }
}
