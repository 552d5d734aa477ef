import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import PostgresNIO
@testable import ResponseService
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The admin API for a study's responses and forwarding, with study-metadata (live) answering
/// who a bearer token belongs to.
@Suite struct ResponseAdminResponsesTests {
    let admin = ResponseAdminTokenTests()

    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test func forwardingSettingsAreValidatedRedactedAndAudited() async throws {
        try await admin.withServices { client, _, root, postgres in
            let path = "/admin/v1/studies/SLEEPWELL/forwarding"
            let (initial, initialBody, _) = try await admin.send(client, .get, path, token: root)
            #expect(initial == .ok)
            #expect(try json(initialBody)["type"] == .string("disabled"))

            // Each mistake named, nothing stored.
            let (bad, badBody, _) = try await admin.send(
                client, .put, path, token: root, body: #"{"type": "Basic", "url": "not a url", "username": " "}"#)
            #expect(bad == .unprocessableContent)
            let messages = (try json(badBody)["error"]?["problems"]?.array ?? []).compactMap { $0["message"]?.text }
            #expect(messages == ["Forwarding endpoint URL is malformed", "Field cannot be blank.", "Field cannot be blank."])
            let (plain, plainBody, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "Basic", "url": "http://example.org/in", "username": "u", "password": "p"}"#)
            #expect(plain == .unprocessableContent, "\(plainBody)")
            let (oauth, oauthBody, _) = try await admin.send(
                client, .put, path, token: root, body: #"{"type": "OAuth", "url": "https://example.org/in"}"#)
            #expect(oauth == .unprocessableContent)
            #expect((try json(oauthBody)["error"]?["problems"]?.array ?? []).count == 3)
            #expect(try await admin.send(client, .put, path, token: root, body: #"{"type": "FTP"}"#).0 == .unprocessableContent)
            #expect(try await admin.send(client, .get, path, token: root).1.contains("\"disabled\""))

            // Stored; shown without the password; a redacted password keeps it.
            let (saved, savedBody, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "Basic", "url": "https://example.org/in", "username": "u", "password": "first-secret"}"#)
            #expect(saved == .ok, "\(savedBody)")
            #expect(!savedBody.contains("first-secret"))
            #expect(try json(savedBody)["password"] == .string("***REDACTED***"))
            let (kept, _, _) = try await admin.send(
                client, .put, path, token: root,
                body: #"{"type": "basic", "url": "https://example.org/other", "username": "u2", "password": "***REDACTED***"}"#)
            #expect(kept == .ok)
            let logger = Logger(label: "test")
            let store = ForwardingStore(
                client: postgres, encryptionKey: Data(base64Encoded: TestConfiguration.encryptionKey)!,
                audit: AuditLog(client: postgres, logger: logger), logger: logger)
            #expect(
                try await store.settings(studyKey: "SLEEPWELL")?.target
                    == .basic(url: URL(string: "https://example.org/other")!, username: "u2", password: "first-secret"))
            var actions: [String] = []
            for try await action in try await postgres.query(
                "SELECT action FROM audit_events WHERE action LIKE 'forwarding.%'", logger: logger
            ).decode(String.self) { actions.append(action) }
            #expect(actions == ["forwarding.updated", "forwarding.updated"])

            // Viewers of nothing, and anonymous callers, are refused.
            #expect(try await admin.send(client, .get, path, token: nil).0 == .unauthorized)
        }
    }

    @Test func failedResponsesAreListedAndReprocessedOnlyWhenInError() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            // A design the rules refuse: its response fails, and fails again when reprocessed.
            let empty = try String(contentsOf: ResponseProcessingTests.file("empty", "1.0"), encoding: .utf8)
            try await h.sql(
                """
                INSERT INTO activity_designs (study_key, activity_id, version, design)
                VALUES ('SLEEPWELL', 'empty', '1.0', \(empty)::jsonb)
                """)
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            let (submitted, _, _) = try await h.call(
                "mobileappstudy-processResponse.api",
                json: ["type": "SurveyResponse", "participantId": appToken, "metadata": ["activityId": "empty", "version": "1.0"],
                       "data": ["results": []]])
            #expect(submitted == .ok)
            let processing = ResponseProcessingTests()
            let id = try await processing.latest(h)
            #expect(try await processing.settled(h, id).0 == "error")

            let (listed, listBody, _) = try await admin.send(
                client, .get, "/admin/v1/studies/SLEEPWELL/responses?status=error", token: root)
            #expect(listed == .ok)
            let rows = try json(listBody)["responses"]?.array ?? []
            #expect(rows.count == 1)
            #expect(rows.first?["errorMessage"]?.text == "Design document does not contain all the required fields (activityId, steps)")
            #expect(try await admin.send(client, .get, "/admin/v1/studies/SLEEPWELL/responses?status=odd", token: root).0 == .badRequest)

            let reprocess = "/admin/v1/studies/SLEEPWELL/responses/reprocess"
            #expect(try await admin.send(client, .post, reprocess, token: root, body: #"{"ids": []}"#).1.contains("No responses to reprocess"))
            let (done, doneBody, _) = try await admin.send(client, .post, reprocess, token: root, body: #"{"ids": [\#(id), 999999]}"#)
            #expect(done == .ok)
            #expect(try json(doneBody) == .object(["countReprocessed": .number(1), "notReprocessed": .array([.number(999_999)])]))
            // Processed again, from the start, with the same outcome.
            let deadline = ContinuousClock.now + .seconds(20)
            var status = ""
            repeat {
                try await Task.sleep(for: .milliseconds(100))
                for try await value in try await postgres.query(
                    "SELECT status FROM responses WHERE id = \(id)", logger: Logger(label: "test")
                ).decode(String.self) { status = value }
            } while status != "error" && ContinuousClock.now < deadline
            #expect(status == "error")
            var actions: [String] = []
            for try await action in try await postgres.query(
                "SELECT action FROM audit_events WHERE action = 'responses.reprocessed'", logger: Logger(label: "test")
            ).decode(String.self) { actions.append(action) }
            #expect(actions.count == 1)
        }
    }
}
