import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// Token batches through the admin API, with study-metadata (live) answering who a bearer token
/// belongs to.
@Suite(.needsCluster) struct ResponseAdminTokenTests {
    let admin = ResponseAdmin()

    @Test func aHundredThousandTokensAreCreatedListedAndDownloaded() async throws {
        try await admin.withServices { client, _, root, postgres in
            let started = ContinuousClock.now
            let (created, createdBody, _) = try await admin.send(
                client, .post, "/admin/v1/studies/sleepwell/token-batches", token: root, body: #"{"count": 100000}"#)
            let took = ContinuousClock.now - started
            #expect(created == .created, "\(createdBody)")
            let reply = try JSONDecoder().decode(JSONObject.self, from: Data(createdBody.utf8))
            #expect(reply["count"] == .number(100_000))
            let batchId = try #require(reply["batchId"]?.text)
            print("a 100,000-token batch took \(took) (debug build, through HTTP)")

            let (listed, listBody, _) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: root)
            #expect(listed == .ok)
            let list = try JSONDecoder().decode(JSONValue.self, from: Data(listBody.utf8))
            guard case .array(let batches)? = list["batches"], let first = batches.first else {
                Issue.record("no batches: \(listBody)")
                return
            }
            #expect(first["count"] == .number(100_000))
            #expect(first["used"] == .number(0))
            #expect(first["createdBy"]?.text == "root@studystack.test")

            let (downloaded, csv, headers) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/token-batches/\(batchId)/tokens.csv", token: root)
            #expect(downloaded == .ok)
            #expect(headers[.contentType] == "text/csv; charset=utf-8")
            let lines = csv.split(separator: "\n")
            #expect(lines.first == "token,used")
            let tokens = lines.dropFirst().map { $0.split(separator: ",") }
            #expect(tokens.count == 100_000)
            #expect(Set(tokens.map { $0[0] }).count == 100_000)
            #expect(tokens.allSatisfy { $0.count == 2 && $0[1] == "false" && $0[0].count == 9 && EnrollmentToken.isValid(String($0[0])) })

            // Nothing of a token is stored in clear.
            let sample = String(tokens[0][0])
            let rows = try await postgres.query(
                "SELECT count(*)::int FROM enrollment_tokens WHERE token_hmac = \(sample) OR position(\(sample)::bytea in sealed) > 0",
                logger: Logger(label: "test"))
            #expect((try await rows.decode(Int.self).single()) == 0)
            let audit = try await postgres.query(
                "SELECT action FROM audit_events ORDER BY id", logger: Logger(label: "test"))
            var actions: [String] = []
            for try await action in audit.decode(String.self) { actions.append(action) }
            #expect(actions == ["tokens.batch_created", "tokens.batch_downloaded"])
        }
    }

    @Test func theQRSheetOfFiveHundredTokensReadsBackAsExactlyTheBatch() async throws {
        try await admin.withServices(beforeResponse: Self.launchSleepwell) { client, metadataClient, root, postgres in
            let (_, createdBody, _) = try await admin.send(
                client, .post, "/admin/v1/studies/SLEEPWELL/token-batches", token: root, body: #"{"count": 500}"#)
            let batchId = try #require(try JSONDecoder().decode(JSONObject.self, from: Data(createdBody.utf8))["batchId"]?.text)
            let (_, csv, _) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/token-batches/\(batchId)/tokens.csv", token: root)
            let tokens = csv.split(separator: "\n").dropFirst().map { String($0.split(separator: ",")[0]) }
            try #require(tokens.count == 500)

            let path = "/admin/v1/studies/SLEEPWELL/token-batches/\(batchId)/qr.pdf"
            let (status, pdf, headers) = try await client.execute(
                uri: path, method: .get, headers: [.authorization: "Bearer \(root)"]
            ) { ($0.status, Data(buffer: $0.body), $0.headers) }
            #expect(status == .ok)
            #expect(headers[.contentType] == "application/pdf")
            #expect(headers[.cacheControl] == "no-store")
            #expect(pdf.starts(with: Array("%PDF-1.4".utf8)))
            let text = try ExternalTool.run("pdftotext", ["-", "-"], input: pdf)
            #expect(text.contains("SLEEPWELL enrollment tokens: batch \(batchId.prefix(8).lowercased()), 500 tokens"))
            #expect(text.contains("page 25 of 25"))
            // Every page says what the person handed a code does with it.
            #expect(text.components(separatedBy: "in the study's app when asked for an enrollment token.").count - 1 == 25)
            let read = try ExternalTool.qrCodes(inPDF: pdf)
            #expect(read.count == 500)
            #expect(read.sorted() == tokens.sorted(), "one code per token")

            // Only editors print tokens; a batch is found only under its own study.
            let (_, viewer) = try await MetadataAdmin().makeAdmin(metadataClient, root: root, email: "viewer@studystack.test")
            let (granted, grantedBody) = try await MetadataAdmin().send(
                metadataClient, .put, "/admin/v1/studies/SLEEPWELL/team", token: root,
                body: #"{"email":"viewer@studystack.test","role":"viewer"}"#)
            #expect(granted == .ok, "\(String(buffer: grantedBody))")
            #expect(try await admin.send(client, .get, path, token: viewer).0 == .forbidden)
            #expect(try await admin.send(client, .get, path, token: nil).0 == .unauthorized)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches/\(UUID())/qr.pdf", token: root).0
                == .notFound)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches/nope/qr.pdf", token: root).0
                == .notFound)
            var formats: [String] = []
            for try await format in try await postgres.query(
                "SELECT details->>'format' FROM audit_events WHERE action = 'tokens.batch_downloaded' ORDER BY id",
                logger: Logger(label: "test")
            ).decode(String.self) { formats.append(format) }
            #expect(formats == ["csv", "qr.pdf"])
        }
    }

    @Test func badRequestsAndOtherAdminsAreRefused() async throws {
        try await admin.withServices { client, metadataClient, root, postgres in
            for body in [#"{"count": 0}"#, #"{"count": 100001}"#, #"{"count": "ten"}"#, "not json"] {
                #expect(try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/token-batches", token: root, body: body).0
                    == .badRequest, "\(body)")
            }
            #expect(try await admin.send(client, .post, "/admin/v1/studies/NOSTUDY/token-batches", token: root, body: #"{"count": 1}"#).0
                == .notFound)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: nil).0 == .unauthorized)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: "made-up").0 == .unauthorized)
            // An admin without a role on the study.
            let (_, other) = try await MetadataAdmin().makeAdmin(metadataClient, root: root, email: "norole@studystack.test")
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: other).0 == .forbidden)
            #expect(try await admin.send(client, .post, "/admin/v1/studies/SLEEPWELL/token-batches", token: other, body: #"{"count": 1}"#).0
                == .forbidden)
            let rows = try await postgres.query("SELECT count(*)::int FROM token_batches", logger: Logger(label: "test"))
            #expect((try await rows.decode(Int.self).single()) == 0)

            // Response collection can be turned off and on.
            let (toggled, state, _) = try await admin.send(
                client, .put, "/admin/v1/studies/sleepwell/collection", token: root, body: #"{"enabled": false}"#)
            #expect(toggled == .ok)
            #expect(state.contains(#""collectionEnabled":false"#))
            let enabled = try await postgres.query(
                "SELECT collection_enabled FROM studies WHERE study_key = 'SLEEPWELL'", logger: Logger(label: "test"))
            #expect((try await enabled.decode(Bool.self).single()) == false)
        }
    }

    /// The example study launched in study-metadata (with its app), before the response service starts.
    @Sendable static func launchSleepwell(_ metadata: any TestClientProtocol, _ root: String) async throws {
        let helper = MetadataAdmin()
        _ = try await helper.send(metadata, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
        let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
        _ = try await helper.send(metadata, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
        #expect(try await helper.send(metadata, .post, "/admin/v1/studies/SLEEPWELL/launch", token: root).0 == .ok)
    }

    @Test func studiesPublishedBeforeTheServiceStartedAreReadFromStudyMetadata() async throws {
        try await admin.withServices(announce: false, beforeResponse: Self.launchSleepwell) { client, _, root, postgres in
            // The resync runs once the service has started; the study then answers here.
            try await eventually("SLEEPWELL known to the response service", within: .seconds(20)) {
                try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/token-batches", token: root).0
            } until: { $0 == .ok }
            let rows = try await postgres.query(
                "SELECT study_id, status, version FROM studies", logger: Logger(label: "test"))
            var studies: [(String, String, Int)] = []
            for try await row in rows.decode((String, String, Int).self) { studies.append(row) }
            try #require(studies.count == 1)
            #expect(studies[0] == ("SLEEPWELL", "active", 1))
        }
    }

    /// A response's design comes from the running study-metadata over the signed internal call,
    /// is kept, and becomes the activity's table.
    @Test func aResponsesDesignIsFetchedFromStudyMetadataAndApplied() async throws {
        try await admin.withServices(announce: false, beforeResponse: Self.launchSleepwell) { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let token = try await eventually("an enrollment in SLEEPWELL once it is known", within: .seconds(20)) {
                let (_, enrolled, _) = try await h.call(
                    "mobileappstudy-enroll.api", query: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
                return enrolled["data"]?["appToken"]?.text
            }
            let (status, _, _) = try await h.call(
                "mobileappstudy-processResponse.api",
                json: ["type": "SurveyResponse", "participantId": token,
                       "metadata": ["activityId": "weekly", "version": "1.0"],
                       "data": ["results": [["resultType": "numeric", "key": "hoursSlept", "value": 7.5, "skipped": false,
                                             "startTime": "2026-11-21T08:00:00.000-0500", "endTime": "2026-11-21T08:00:05.000-0500"]]]])
            #expect(status == .ok)
            let processing = ProcessingFixture()
            let (state, error) = try await processing.settled(h, try await processing.latest(h))
            #expect(state == "processed", "\(error ?? "")")
            #expect(
                try await postgres.query(
                    "SELECT \"hoursSlept\" FROM \"study_SLEEPWELL\".weekly", logger: Logger(label: "test")
                ).decode(Double.self).single() == 7.5)
            #expect(
                try await postgres.query(
                    "SELECT count(*)::int FROM activity_designs WHERE activity_id = 'weekly' AND applied_at IS NOT NULL",
                    logger: Logger(label: "test")
                ).decode(Int.self).single() == 1)
            _ = root
        }
    }
}
