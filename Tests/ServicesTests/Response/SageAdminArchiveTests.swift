import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import JSONText
import StudyModels
import Testing
import TestSupport

/// A study's certificate for the app build, archives sealed for it as Sage's clients seal them
/// (`openssl cms -encrypt`), and the archives listed and downloaded by the study's team.
@Suite(.needsCluster) struct SageAdminArchiveTests {
    let admin = ResponseAdmin()

    @Test func archivesSealedForTheStudysCertificateAreOpenedListedAndDownloaded() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let activities = [StudyEvent.ActivityVersion(activityId: "sleep", version: 1, label: "1.0", type: "questionnaire")]
            #expect(try await h.studyEvent("SLEEPWELL", version: 2, activities: activities) == .ok)
            let base = "/admin/v1/studies/SLEEPWELL/sage"

            // The certificate: made on first use, the same ever after, readable by openssl.
            #expect(try await admin.send(client, .get, "\(base)/certificate", token: nil).0 == .unauthorized)
            let (status, pem, headers) = try await admin.send(client, .get, "\(base)/certificate", token: root)
            #expect(status == .ok)
            #expect(headers[.contentType] == "application/x-pem-file")
            #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
            #expect(try await admin.send(client, .get, "\(base)/certificate", token: root).1 == pem)
            #expect(try ExternalTool.run("openssl", ["x509", "-noout", "-subject"], input: Data(pem.utf8)).contains("SLEEPWELL"))
            // The private key is kept sealed: its DER is nowhere in the row.
            var sealedKeys = 0
            for try await sealed in try await postgres.query(
                "SELECT sealed_private_key FROM sage_study_keys WHERE study_key = 'SLEEPWELL'", logger: Logger(label: "test")
            ).decode(ByteBuffer.self) {
                sealedKeys += 1
                #expect(!Array(buffer: sealed).starts(with: [0x30, 0x82]), "a PKCS#8 key in the clear")
            }
            #expect(sealedKeys == 1)

            let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            let archive = SageArchiveFixture.archive()
            let sealed = try OpenSSLCMS.encrypt(archive, certificatePEM: pem)
            let sage = SageArchiveFixture()
            let (posted, receipt) = try await sage.post(h, sealed, appToken: appToken, study: "SLEEPWELL")
            #expect(posted == .created, "\(receipt)")
            let archiveId = try #require(receipt["archiveId"]?.string)
            // Sealed for someone else's certificate: refused, nothing stored.
            let stranger = try OpenSSLCMS.encrypt(SageArchiveFixture.archive(), certificatePEM: try OpenSSLCMS.strangerCertificate())
            let (refused, refusal) = try await sage.post(h, stranger, appToken: appToken, study: "SLEEPWELL")
            #expect(refused == .unprocessableContent)
            #expect(refusal.serialized(sortedKeys: true).contains("cannot be opened"))

            let (listed, listBody, _) = try await admin.send(client, .get, "\(base)/archives", token: root)
            #expect(listed == .ok)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let list = try decoder.decode(SageArchiveList.self, from: Data(listBody.utf8))
            #expect(list.archives.count == 1)
            let summary = try #require(list.archives.first)
            #expect(summary.archiveId == archiveId)
            #expect(summary.sealed)
            #expect(summary.assessmentId == "sleep")
            #expect(summary.files.map(\.name) == ["metadata.json", "assessmentResult.json", "motion.json"])
            #expect(summary.files.map(\.listed) == [false, true, true])
            #expect(summary.files.map(\.unexpected) == [false, false, false])
            #expect(try await admin.send(client, .get, "\(base)/archives?participant=\(summary.participantId + 1)", token: root).1
                .contains(#""archives":[]"#))
            #expect(try await admin.send(client, .get, "\(base)/archives?limit=0", token: root).0 == .badRequest)

            // Downloads: the archive as opened, and one of its files; each audited.
            let zip = try await client.execute(uri: "\(base)/archives/\(archiveId)", method: .get, headers: [.authorization: "Bearer \(root)"]) {
                ($0.status, Array(buffer: $0.body))
            }
            #expect(zip.0 == .ok)
            #expect(zip.1 == archive)
            let (fileStatus, motion, _) = try await admin.send(client, .get, "\(base)/archives/\(archiveId)/file?name=motion.json", token: root)
            #expect(fileStatus == .ok)
            #expect(motion.contains("uptime"))
            #expect(try await admin.send(client, .get, "\(base)/archives/\(archiveId)/file?name=other.json", token: root).0 == .notFound)
            #expect(try await admin.send(client, .get, "\(base)/archives/\(UUID().uuidString)", token: root).0 == .notFound)
            #expect(try await admin.send(client, .get, "\(base)/archives/not-a-uuid", token: root).0 == .notFound)
            // The study's exports list its archives beside its tables.
            let (_, lines, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/export.jsonl", token: root)
            let archiveLines = lines.split(separator: "\n").filter { $0.hasPrefix(#"{"sageArchive""#) }
            #expect(archiveLines.count == 1)
            #expect(archiveLines.first?.contains(#""ArchiveId":"\#(archiveId)""#) == true, "\(archiveLines)")
            // Typed as the admin API types them: numbers, a boolean, the list of files.
            let line = try #require(archiveLines.first.map { try JSONValue.parse(Array($0.utf8), budget: .studyDocument) })
            #expect(line["sageArchive"]?["Files"] == .array(["metadata.json", "assessmentResult.json", "motion.json"].map(JSONValue.string)))
            #expect(line["sageArchive"]?["Bytes"] == .number(Double(summary.bytes)))
            #expect(line["sageArchive"]?["Sealed"] == .bool(true))
            #expect(line["sageArchive"]?["ParticipantId"] == .number(Double(summary.participantId)))
            let exported = try await client.execute(
                uri: "/admin/v1/studies/SLEEPWELL/export.zip", method: .get, headers: [.authorization: "Bearer \(root)"]
            ) { String(decoding: Array(buffer: $0.body), as: UTF8.self) }
            #expect(exported.contains("sage_archives.csv"))
            #expect(exported.contains(#""sageArchives":{"file":"sage_archives.csv","rows":1}"#))
            #expect(exported.contains(archiveId))
            var audited: [String] = []
            for try await action in try await postgres.query(
                "SELECT action FROM audit_events WHERE action LIKE 'sage.%' ORDER BY id", logger: Logger(label: "test")
            ).decode(String.self) { audited.append(action) }
            // The archive sealed for a stranger's certificate is kept as it came (docs/sage.md, Refused archives).
            #expect(audited == [
                "sage.key_pair_created", "sage.archive_received", "sage.archive_refused", "sage.archive_downloaded", "sage.archive_downloaded",
            ])
            #expect(try await SageArchiveFixture().count(h, "audit_events WHERE action = 'responses.exported'") == 2)
        }
    }

    /// The whole way: a Sage-only assessment imported into the draft and launched, its design read
    /// by the response service from study-metadata, an archive's answers in its tables.
    @Test func aSageOnlyAssessmentsArchiveIsProcessedWithTheDesignStudyMetadataServes() async throws {
        try await admin.withServices(announce: false, beforeResponse: { metadata, root in
            let helper = MetadataAdmin()
            _ = try await helper.send(metadata, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await helper.send(metadata, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
            let (imported, body) = try await helper.send(
                metadata, .put, "/admin/v1/studies/SLEEPWELL/draft/assessments/sleep", token: root, body: SageArchiveFixture.assessment)
            #expect(imported == .created, "\(String(buffer: body))")
            #expect(String(buffer: body).contains("countdown"), "Sage-only for its countdown")
            #expect(try await helper.send(metadata, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
        }) { client, _, root, postgres in
            try await eventually("SLEEPWELL known to the response service", within: .seconds(20)) {
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/sage/archives", token: root).0
            } until: { $0 == .ok }
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            let sage = SageArchiveFixture()
            let (posted, receipt) = try await sage.post(h, SageArchiveFixture.archive(), appToken: appToken, study: "SLEEPWELL")
            #expect(posted == .created, "\(receipt)")
            let processing = ProcessingFixture()
            let (status, error) = try await processing.settled(h, try await processing.latest(h))
            #expect(status == "processed", "\(error ?? "")")
            let (listed, list, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/sage/archives", token: root)
            #expect(listed == .ok)
            #expect(list.contains(#""status":"processed""#))
            let rows = try await sage.rows(h, list: "sleep", study: "SLEEPWELL")
            #expect(rows.count == 1)
            #expect(rows.first?["hours"] == .number(7))
            #expect(try await sage.rows(h, list: "sleepmood_factors", study: "SLEEPWELL").count == 2)
        }
    }
}

