import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import StudyModels
import Testing
import TestSupport

/// `processResponse` (stored durably before the answer, replays stored once, the original's
/// checks and words) and `withdrawFromStudy` with and without deletion, with the
/// original's test data's complete request envelope (Tests/Fixtures).
@Suite(.needsCluster) struct ResponseSubmissionTests {
    static let envelopeURL = Conformance.labkey.appendingPathComponent("SurveyMetadata/MYTESTSTUDY_NewSurvey_1--RESPONSE.json")

    /// The conformance envelope with this participant's app token in place of the original's.
    static func envelope(appToken: String) throws -> [String: Any] {
        var body = try JSONSerialization.jsonObject(with: Data(contentsOf: envelopeURL)) as! [String: Any]
        body["participantId"] = appToken
        return body
    }

    func enroll(_ h: ResponseHarness, study: String) async throws -> String {
        let (status, body, _) = try await h.call(
            "mobileappstudy-enroll.api", json: ["studyId": study, "allowDataSharing": "true"])
        #expect(status == .ok)
        return try #require(body["data"]?["appToken"]?.text)
    }

    func count(_ h: ResponseHarness, _ table: String) async throws -> Int { try await h.postgres.count(rowsOf: table) }

    @Test func aResponseIsStoredOnceAndAnsweredAfterTheCommit() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("MYTESTSTUDY")
            let appToken = try await enroll(h, study: "MYTESTSTUDY")
            let envelope = try Self.envelope(appToken: appToken)
            let (status, body, _) = try await h.call("mobileappstudy-processResponse.api", json: envelope)
            #expect(status == .ok)
            #expect(body == .object(["success": .bool(true)]))
            // The app replays it after being offline: still success, still one row.
            #expect(try await h.call("mobileappstudy-processresponse.api", json: envelope).0 == .ok)
            #expect(try await count(h, "responses") == 1)
            let rows = try await h.postgres.query(
                "SELECT activity_id, activity_version, status, data FROM responses", logger: Logger(label: "test"))
            let stored = try await rows.decode((String, String, String, String).self).collect()
            try #require(stored.count == 1)
            for (activity, version, state, data) in stored {
                #expect(activity == "NewSurvey")
                #expect(version == "1")
                #expect(state == "pending")
                let stored = try JSONDecoder().decode(JSONValue.self, from: Data(data.utf8))
                let sent = try JSONDecoder().decode(JSONValue.self, from: try JSONSerialization.data(withJSONObject: envelope["data"]!))
                #expect(stored == sent)
            }
            // Another run of the same activity is another response.
            var second = envelope
            second["metadata"] = ["activityId": "NewSurvey", "version": "1", "activityRunId": "2"]
            #expect(try await h.call("mobileappstudy-processResponse.api", json: second).0 == .ok)
            #expect(try await count(h, "responses") == 2)
        }
    }

    /// Many phones at once, some replaying: the responses share commits (group commit), each is
    /// answered after the commit that holds it, and every distinct one is stored exactly once.
    @Test func concurrentSubmissionsAndReplaysAreEachStoredOnce() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("MYTESTSTUDY")
            let appTokens = [try await enroll(h, study: "MYTESTSTUDY"), try await enroll(h, study: "MYTESTSTUDY")]
            let bodies = try appTokens.flatMap { token in
                try (1...30).map { run in
                    var envelope = try Self.envelope(appToken: token)
                    envelope["metadata"] = ["activityId": "NewSurvey", "version": "1", "activityRunId": "\(run)"]
                    return try JSONSerialization.data(withJSONObject: envelope)
                }
            }
            // Each response sent three times, all at once.
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for body in bodies + bodies + bodies {
                    group.addTask {
                        let json = try JSONSerialization.jsonObject(with: body) as! [String: Any]
                        return try await h.call("mobileappstudy-processResponse.api", json: json).0
                    }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.count == 180 && statuses.allSatisfy { $0 == .ok })
            #expect(try await count(h, "responses") == 60)
            // The same answers with their keys in another order are the same response.
            var reordered = try #require(try JSONSerialization.jsonObject(with: bodies[0]) as? [String: Any])
            let data = try #require(reordered["data"] as? [String: Any])
            let text = try JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])
            let reversed = String(decoding: text, as: UTF8.self)
            #expect(try await h.call("mobileappstudy-processResponse.api", json: reordered).0 == .ok)
            reordered["data"] = try JSONSerialization.jsonObject(with: Data(reversed.utf8))
            #expect(try await h.call("mobileappstudy-processResponse.api", json: reordered).0 == .ok)
            #expect(try await count(h, "responses") == 60)
            // Text PostgreSQL cannot hold is refused on its own, storing nothing.
            var nul = reordered
            nul["data"] = ["results": [["key": "q", "resultType": "text", "value": "a\u{0}b"]]]
            let (refused, refusal, _) = try await h.call("mobileappstudy-processResponse.api", json: nul)
            #expect(refused == .badRequest)
            #expect(refusal.exception?.contains("NUL") == true)
            #expect(try await count(h, "responses") == 60)
        }
    }

    @Test func badSubmissionsGetTheOriginalsMessagesAndStoreNothing() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("MYTESTSTUDY")
            let appToken = try await enroll(h, study: "MYTESTSTUDY")
            let good = try Self.envelope(appToken: appToken)
            func without(_ key: String) -> [String: Any] { good.filter { $0.key != key } }
            func metadataWithout(_ key: String) -> [String: Any] {
                var body = good
                body["metadata"] = (good["metadata"] as! [String: Any]).filter { $0.key != key }
                return body
            }
            var unknownKey = good
            unknownKey["surprise"] = 1
            var unknownToken = good
            unknownToken["participantId"] = String(repeating: "0", count: 32)
            let cases: [([String: Any]?, String)] = [
                (nil, "Metadata not found"),
                (without("metadata"), "Metadata not found"),
                (without("participantId"), "ParticipantId not included in request"),
                (unknownToken, "Unable to identify participant"),
                (metadataWithout("activityId"), "ActivityId not included in request"),
                (metadataWithout("version"), "SurveyVersion not included in request"),
                (without("data"), "Response not included in request"),
                (unknownKey, "Error binding property: Unrecognized field \"surprise\""),
            ]
            for (body, message) in cases {
                let (status, reply, _) = try await h.call("mobileappstudy-processResponse.api", json: body)
                #expect(status == .badRequest, "\(message)")
                #expect(reply.exception == message)
            }
            // `appToken` is accepted and ignored, as the original did.
            var withAppToken = good
            withAppToken["appToken"] = "ignored"
            #expect(try await count(h, "responses") == 0)
            #expect(try await h.call("mobileappstudy-processResponse.api", json: withAppToken).0 == .ok)

            // Collection turned off: refused with the study named.
            try await h.sql("UPDATE studies SET collection_enabled = false")
            var another = good
            another["metadata"] = ["activityId": "NewSurvey", "version": "2"]
            let (_, off, _) = try await h.call("mobileappstudy-processResponse.api", json: another)
            #expect(off.exception == "Response collection is not currently enabled for study [ MYTESTSTUDY ]")
            #expect(try await count(h, "responses") == 1)
        }
    }

    @Test func withdrawalKeepsOrDeletesTheParticipantsData() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("MYTESTSTUDY")
            let tokens = try await h.tokens(2, study: "MYTESTSTUDY")
            var appTokens: [String] = []
            for token in tokens {
                let (status, body, _) = try await h.call(
                    "mobileappstudy-enroll.api", query: ["studyId": "MYTESTSTUDY", "token": token, "allowDataSharing": "true"])
                #expect(status == .ok)
                let appToken = try #require(body["data"]?["appToken"]?.text)
                appTokens.append(appToken)
                #expect(try await h.call("mobileappstudy-processResponse.api", json: try Self.envelope(appToken: appToken)).0 == .ok)
            }
            #expect(try await count(h, "responses") == 2)

            // Without deletion: the data and the token link stay; the app token stops working.
            #expect(try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": appTokens[0]]).0 == .ok)
            #expect(try await count(h, "responses") == 2)
            let (_, again, _) = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": appTokens[0]])
            #expect(again.exception == "Invalid ParticipantId.")
            let (_, kept, _) = try await h.call(
                "mobileappstudy-validateEnrollmentToken.api", query: ["studyId": "MYTESTSTUDY", "token": tokens[0]])
            #expect(kept.exception == "Token already in use")
            let (_, gone, _) = try await h.call("mobileappstudy-processResponse.api", json: try Self.envelope(appToken: appTokens[0]))
            #expect(gone.exception == "Unable to identify participant")

            // With deletion: the responses and the token go.
            #expect(try await h.call(
                "mobileappstudy-withdrawFromStudy.api", json: ["participantId": appTokens[1], "delete": true]).0 == .ok)
            #expect(try await count(h, "responses") == 1)
            let (_, unknown, _) = try await h.call(
                "mobileappstudy-validateEnrollmentToken.api", query: ["studyId": "MYTESTSTUDY", "token": tokens[1]])
            #expect(unknown.exception == "Unknown token: '\(tokens[1])'")
            #expect(try await h.call("mobileappstudy-withdrawFromStudy.api").1.exception == "ParticipantId not included in request")
        }
    }

    /// The dispatcher once sent any action it did not name to `withdrawFromStudy`. An action the
    /// table does not name answers 404 and changes nothing.
    @Test func anActionTheTableDoesNotNameIsRefusedAndWithdrawsNobody() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("MYTESTSTUDY")
            let token = try #require(try await h.tokens(1, study: "MYTESTSTUDY").first)
            let (_, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", query: ["studyId": "MYTESTSTUDY", "token": token, "allowDataSharing": "true"])
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            for action in ["withdrawFromStudies", "deleteParticipant", "withdraw"] {
                let (status, body, _) = try await h.call(
                    "mobileappstudy-\(action).api", query: ["participantId": appToken, "delete": "true"])
                #expect(status == .notFound, "\(action)")
                #expect(body.exception == "Unknown action: \(action.lowercased())", "\(action)")
            }
            // Still enrolled: a response is taken.
            #expect(try await h.call("mobileappstudy-processResponse.api", json: try Self.envelope(appToken: appToken)).0 == .ok)
        }
    }
}

@Suite struct NULEscapeTests {
    /// The ingest statement reads each response's answers as jsonb once, then hashes and stores
    /// that value. Inlined, its `input` would have the answers read three times, a third of the
    /// statement's time; the plan PostgreSQL keeps for the prepared statement says which.
    @Test(.needsCluster) func theIngestStatementReadsEachResponsesAnswersOnce() async throws {
        try await ResponseHarness.run { h in
            let logger = Logger(label: "test")
            let plan = try await h.postgres.withConnection { connection in
                try await connection.query("SET plan_cache_mode = force_generic_plan", logger: logger)
                try await connection.query(
                    PostgresQuery(unsafeSQL: "PREPARE ingest(\(Array(repeating: "text[]", count: 10).joined(separator: ", "))) AS " + IngestStatement.sql),
                    logger: logger)
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE ingest(\(Array(repeating: "'{}'", count: 10).joined(separator: ", ")))"), logger: logger)
                var lines: [String] = []
                for try await line in rows.decode(String.self) { lines.append(line) }
                return lines.joined(separator: "\n")
            }
            #expect(plan.ranges(of: "(t.d)::jsonb").count == 1, "\(plan)")
            #expect(plan.contains("jsonb_hash_extended(i.d, '0'::bigint)"), "\(plan)")
        }
    }

    @Test func onlyARealNULEscapeCounts() {
        #expect(ResponseSubmission.escapesNUL(#"{"a":"x\u0000y"}"#))
        #expect(ResponseSubmission.escapesNUL(#"{"a":"\u00\u0000"}"#))
        #expect(ResponseSubmission.escapesNUL(#"{"a":"\\\u0000"}"#))
        #expect(!ResponseSubmission.escapesNUL(#"{"a":"\\u0000"}"#))
        #expect(!ResponseSubmission.escapesNUL(#"{"a":"u0000 \u0001"}"#))
    }
}
