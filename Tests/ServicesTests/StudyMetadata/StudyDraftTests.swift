import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ServiceKit
import ServiceKitHTTP
import StudyMetadataCore
import StudyMetadataHTTP
import StudyMetadataService
import StudyModels
import Testing
import TestSupport

/// Apps and study drafts through the admin API, against PostgreSQL.
@Suite(.needsCluster) struct StudyDraftTests {
    let admin = MetadataAdmin()

    @Test func appsGetCredentialsShownOnceAndStoredHashed() async throws {
        try await admin.withService { client, root, url in
            let (status, body) = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            #expect(status == .created)
            let created = try JSONSerialization.jsonObject(with: Data(buffer: body)) as! [String: Any]
            let credentials = try #require(created["credentials"] as? [String: String])
            #expect(Set(credentials.keys) == ["ios", "android"])
            // Android's Base64.DEFAULT breaks lines after 76 characters; the credential fits in one.
            #expect(Data(credentials["android"]!.utf8).base64EncodedString().count <= 76)

            try await TestDatabase.withClient(url: url) { postgres, logger in
                let store = AppStore(
                    client: postgres, catalog: CatalogCache(), outbox: Outbox(client: postgres, logger: logger),
                    audit: AuditLog(client: postgres, logger: logger), logger: logger)
                let ios = Data(credentials["ios"]!.utf8).base64EncodedString()
                let result = try await store.authenticate(basicHeader: "Basic \(ios)")
                #expect(result?.appId == "DEMOAPP")
                #expect(result?.platform == .ios)
                // Android's encoder ends the base64 with a newline; that is accepted.
                let android = Data((credentials["android"]! + "\n").utf8).base64EncodedString() + "\n"
                #expect(try await store.authenticate(basicHeader: "Basic \(android)")?.platform == .android)
                let forged = Data((credentials["ios"]!.split(separator: ":")[0] + ":guess").utf8).base64EncodedString()
                #expect(try await store.authenticate(basicHeader: "Basic \(forged)") == nil)
                let rows = try await postgres.query("SELECT token_hash FROM app_credentials", logger: logger)
                let hashes = try await rows.decode(String.self).collect()
                try #require(hashes.count == credentials.count)
                for hash in hashes {
                    #expect(!credentials.values.contains { $0.hasSuffix(hash) })
                    #expect(hash.count == 64)
                }
            }

            let (again, _) = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            #expect(again == .conflict)
            let (listed, listBody) = try await admin.send(client, .get, "/admin/v1/apps", token: root)
            #expect(listed == .ok)
            #expect(String(buffer: listBody).contains("DEMOORG"))
            #expect(!String(buffer: listBody).contains(credentials["ios"]!.split(separator: ":")[1]))

            let bad = MetadataAdmin.demoApp.replacingOccurrences(of: "https://example.org/terms", with: "ftp://x")
            let (invalid, invalidBody) = try await admin.send(client, .put, "/admin/v1/apps/DEMOAPP", token: root, body: bad)
            #expect(invalid == .unprocessableContent)
            let problems = try JSONDecoder().decode(MetadataAdmin.Problems.self, from: Data(buffer: invalidBody))
            #expect(problems.error.problems?.map(\.pointer) == ["/termsUrl"])
        }
    }

    @Test func everyAppChangeIsQueuedForTheRegistrationServiceWithAGrowingRevision() async throws {
        try await admin.withService { client, root, url in
            #expect(try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp).0 == .created)
            let withMail = MetadataAdmin.demoApp.replacingOccurrences(
                of: #""kind":"gateway""#,
                with: #""kind":"gateway","feedbackEmail":"fb@example.org","mail":{"fromAddress":"s@example.org","verification":{"subject":"Code","body":"<p><<< TOKEN HERE >>></p>"}}"#)
            #expect(try await admin.send(client, .put, "/admin/v1/apps/DEMOAPP", token: root, body: withMail).0 == .ok)
            // A refused change queues nothing.
            let noMarker = withMail.replacingOccurrences(of: "<<< TOKEN HERE >>>", with: "code")
            let (refused, refusedBody) = try await admin.send(client, .put, "/admin/v1/apps/DEMOAPP", token: root, body: noMarker)
            #expect(refused == .unprocessableContent)
            let problems = try JSONDecoder().decode(MetadataAdmin.Problems.self, from: Data(buffer: refusedBody))
            #expect(problems.error.problems?.map(\.pointer) == ["/mail/verification/body"])

            try await TestDatabase.withClient(url: url) { postgres, logger in
                let rows = try await postgres.query(
                    "SELECT peer, method, path, body FROM internal_outbox ORDER BY id", logger: logger)
                var syncs: [AppSettingsSync] = []
                let queued = try await rows.decode((String, String, String, ByteBuffer).self).collect()
                try #require(queued.count == 2)
                for (peer, method, path, body) in queued {
                    #expect(peer == "registration")
                    #expect(method == "PUT")
                    #expect(path == "/internal/v1/apps/DEMOAPP")
                    syncs.append(try JSONDecoder().decode(AppSettingsSync.self, from: Data(buffer: body)))
                }
                #expect(syncs.map(\.revision) == [1, 2])
                #expect(syncs.last?.app.feedbackEmail == "fb@example.org")
                #expect(syncs.last?.app.mail?.fromAddress == "s@example.org")
            }
        }
    }

    @Test func aDraftIsSavedWholeAndReturnedAsWritten() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            let (created, _) = try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
            #expect(created == .created)
            let (updated, _) = try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)
            #expect(updated == .ok)
            let (status, body) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            #expect(status == .ok)
            let returned = try JSONDecoder().decode(StudyDocument.self, from: Data(buffer: body))
            #expect(returned == (try JSONDecoder().decode(StudyDocument.self, from: Data(example.utf8))))
            let (_, list) = try await admin.send(client, .get, "/admin/v1/studies", token: root)
            #expect(String(buffer: list).contains(#""studyId":"SLEEPWELL""#))
            #expect(String(buffer: list).contains(#""status":"pre_launch""#))
        }
    }

    @Test func anInvalidDraftChangesNothingAndListsEveryProblem() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            _ = try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: example)

            var broken = try JSONSerialization.jsonObject(with: Data(example.utf8)) as! [String: Any]
            broken["timeZone"] = "Nowhere/Else"
            broken["appId"] = "NOAPP"
            var activities = broken["activities"] as! [[String: Any]]
            var steps = activities[0]["steps"] as! [[String: Any]]
            steps[2]["key"] = "sleepQuality"
            activities[0]["steps"] = steps
            broken["activities"] = activities
            let body = String(decoding: try JSONSerialization.data(withJSONObject: broken), as: UTF8.self)

            let (status, response) = try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: body)
            #expect(status == .unprocessableContent)
            let problems = try JSONDecoder().decode(MetadataAdmin.Problems.self, from: Data(buffer: response))
            #expect(problems.error.code == "validation_failed")
            let pointers = Set(problems.error.problems?.map(\.pointer) ?? [])
            #expect(pointers.isSuperset(of: ["/timeZone", "/appId", "/activities/0/steps/2/key"]))

            // Unchanged.
            let (_, stored) = try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: root)
            #expect(try JSONDecoder().decode(StudyDocument.self, from: Data(buffer: stored)).timeZone == "America/New_York")

            // A wrongly typed field is located too.
            let mistyped = example.replacingOccurrences(of: #""enrolling": true"#, with: #""enrolling": "yes""#)
            let (typeStatus, typeBody) = try await admin.send(
                client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: root, body: mistyped)
            #expect(typeStatus == .unprocessableContent)
            let typeProblems = try JSONDecoder().decode(MetadataAdmin.Problems.self, from: Data(buffer: typeBody))
            #expect(typeProblems.error.problems == [ValidationProblem(pointer: "/enrolling", message: "must be true or false")])

            let (mismatch, mismatchBody) = try await admin.send(
                client, .put, "/admin/v1/studies/OTHER/draft", token: root, body: example)
            #expect(mismatch == .unprocessableContent)
            #expect(String(buffer: mismatchBody).contains(#""pointer":"/studyId""#))
        }
    }

    @Test func studyRolesGuardTheDraft() async throws {
        try await admin.withService { client, root, _ in
            _ = try await admin.send(client, .post, "/admin/v1/apps", token: root, body: MetadataAdmin.demoApp)
            let example = try String(contentsOf: MetadataAdmin.exampleURL, encoding: .utf8)
            let (_, creator) = try await admin.makeAdmin(client, root: root, email: "creator@studystack.test")
            let (outsiderId, outsider) = try await admin.makeAdmin(client, root: root, email: "outsider@studystack.test")

            // Whoever starts a study becomes its study admin.
            let (created, _) = try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: creator, body: example)
            #expect(created == .created)
            let (_, me) = try await admin.send(client, .get, "/admin/v1/me", token: creator)
            #expect(String(buffer: me).contains(#""SLEEPWELL":"study_admin""#))

            // Others can neither read nor write it, nor see it listed.
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: outsider).0 == .forbidden)
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: outsider, body: example).0 == .forbidden)
            #expect(!String(buffer: try await admin.send(client, .get, "/admin/v1/studies", token: outsider).1).contains("SLEEPWELL"))

            // A viewer reads but does not write.
            let (granted, _) = try await admin.send(
                client, .put, "/admin/v1/studies/SLEEPWELL/roles/\(outsiderId)", token: creator, body: #"{"role":"viewer"}"#)
            #expect(granted == .ok)
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/draft", token: outsider).0 == .ok)
            #expect(try await admin.send(client, .put, "/admin/v1/studies/SLEEPWELL/draft", token: outsider, body: example).0 == .forbidden)
        }
    }
}
