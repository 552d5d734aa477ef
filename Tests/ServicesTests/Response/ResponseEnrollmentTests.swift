import Foundation
import HTTPTypes
import Logging
import ResponseCore
import ResponseHTTP
import ResponseService
import StudyModels
import Testing
import TestSupport

/// Enrollment tokens and the enrollment calls' validation order,
/// messages and envelopes (2.1-2.3), through the real HTTP API.
@Suite struct ResponseEnrollmentTests {
    @Test func checksumVectorsOfTheSpec() {
        for valid in ["ABCDEFGHI", "AAAAAAAAA", "ZZZZZZZZI", "A", "NXAZJLGIS", "SNFLDNIRL", "UFTRFLXXB", "CQXNSQFEH"] {
            #expect(EnrollmentToken.isValid(valid), "\(valid)")
        }
        for invalid in ["ABCDEFGHZ", "ABCDEFGH", "B", "", "ABCDE FGHI", "ABCDEFGH1", "ÄBCDEFGHI"] {
            #expect(!EnrollmentToken.isValid(invalid), "\(invalid)")
        }
        #expect(EnrollmentToken.checkLetter(for: "ABCDEFGH") == "I")
        #expect(EnrollmentToken.normalized("  abcdefghi \n") == "ABCDEFGHI")
        #expect(EnrollmentToken.normalized("   ") == nil)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let token = EnrollmentToken.generate(using: &generator)
            #expect(token.count == 9 && EnrollmentToken.isValid(token), "\(token)")
        }
    }

    @Test(.needsCluster) func enrollFollowsTheOriginalsOrderAndWords() async throws {
        try await ResponseHarness.run { h in
            #expect(try await h.studyEvent("SleepWell") == .ok)
            let tokens = try await h.tokens(3, study: "SleepWell")
            func enroll(_ query: [String: String]) async throws -> (HTTPResponse.Status, JSONValue) {
                let (status, body, _) = try await h.call("mobileappstudy-enroll.api", query: query)
                return (status, body)
            }
            // Each failure, as the original words it, with every failure of the request in `errors`.
            let cases: [([String: String], String)] = [
                ([:], "StudyId is required"),
                (["studyId": "nostudy", "allowDataSharing": "true"], "Study with StudyId 'NOSTUDY' does not exist"),
                (["studyId": "sleepwell", "allowDataSharing": "true"], "Token is required"),
                (["studyId": "sleepwell", "token": "ABCDEFGHZ", "allowDataSharing": "true"], "Invalid token: 'ABCDEFGHZ'"),
                (["studyId": "sleepwell", "token": "ABCDEFGHI", "allowDataSharing": "true"], "Unknown token: 'ABCDEFGHI'"),
                (["studyId": "sleepwell", "token": tokens[0], "allowDataSharing": "TRUE"], "Invalid allowDataSharing value: 'TRUE'"),
            ]
            for (query, message) in cases {
                let (status, body) = try await enroll(query)
                #expect(status == .badRequest, "\(query)")
                #expect(body.exception == message, "\(query)")
                #expect(body["success"] == .bool(false))
            }
            let (_, both) = try await enroll([:])
            if case .array(let errors)? = both["errors"] {
                #expect(errors.compactMap { $0["msg"]?.text } == ["StudyId is required"])
                #expect(errors.first?["field"]?.text == "studyId")
            } else {
                Issue.record("no errors array: \(both)")
            }
            #expect(try await enroll(["studyId": "sleepwell", "language": "es", "allowDataSharing": "NA"]).1.exception
                == "Se requiere un token")

            // Success: a 32-character lower-case hex app token; lower-case input is accepted.
            let (status, enrolled) = try await enroll(
                ["studyId": "sleepwell", "token": tokens[0].lowercased(), "allowDataSharing": "true"])
            #expect(status == .ok)
            #expect(enrolled["success"] == .bool(true))
            let appToken = try #require(enrolled["data"]?["appToken"]?.text)
            #expect(appToken.count == 32 && appToken.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            // Only the token's hash is stored.
            let rows = try await h.postgres.query("SELECT app_token_hash FROM participants", logger: Logger(label: "test"))
            let hash = try await rows.decode(String?.self).single()
            #expect(hash != nil && hash != appToken)
            // A spent token: in use (before its checksum is even looked at), for enroll and validate.
            #expect(try await enroll(["studyId": "sleepwell", "token": tokens[0], "allowDataSharing": "true"]).1.exception
                == "Token already in use")
            let (_, validated, _) = try await h.call(
                "mobileappstudy-validateEnrollmentToken.api", query: ["studyId": "SLEEPWELL", "token": tokens[0]])
            #expect(validated.exception == "Token already in use")
        }
    }

    @Test(.needsCluster) func validateAndResolveAsBothAppsSendThem() async throws {
        try await ResponseHarness.run { h in
            try await h.studyEvent("SLEEPWELL")
            try await h.studyEvent("OTHER")
            let tokens = try await h.tokens(2, study: "SLEEPWELL")
            // iOS: POST with the query string and an empty body, no content type.
            let (ok, valid, headers) = try await h.call(
                "mobileappstudy-validateEnrollmentToken.api", query: ["studyId": "SLEEPWELL", "token": tokens[0]])
            #expect(ok == .ok)
            #expect(valid["success"] == .bool(true))
            #expect(valid["preEnrollmentParticipantProperties"] == .array([]))
            #expect(headers[.contentType] == "application/json; charset=utf-8")
            // Android: JSON body, lower-case action name; the response- prefix works too.
            let (androidStatus, _, _) = try await h.call(
                "mobileappstudy-validateenrollmenttoken.api", json: ["studyId": "SLEEPWELL", "token": tokens[1]])
            #expect(androidStatus == .ok)
            #expect(try await h.call("response-validateEnrollmentToken.api", query: ["studyId": "SLEEPWELL", "token": tokens[1]]).0 == .ok)
            // A token of another study is unknown there.
            let (_, foreign, _) = try await h.call(
                "mobileappstudy-validateEnrollmentToken.api", query: ["studyId": "OTHER", "token": tokens[0]])
            #expect(foreign.exception == "Unknown token: '\(tokens[0])'")
            // Study OTHER has no tokens: enrollment without one is allowed there.
            let (open, enrolled, _) = try await h.call(
                "mobileappstudy-enroll.api", json: ["studyId": "other", "allowDataSharing": "NA"])
            #expect(open == .ok)
            #expect(enrolled["data"]?["appToken"]?.text?.count == 32)

            // resolveEnrollmentToken: the study's id as study-metadata spells it, or the original's 404.
            let (resolved, study, _) = try await h.call("mobileappstudy-resolveEnrollmentToken.api", query: ["token": tokens[0]])
            #expect(resolved == .ok)
            #expect(study == .object(["success": .bool(true), "studyId": .string("SLEEPWELL")]))
            let (missing, notFound, _) = try await h.call("mobileappstudy-resolveEnrollmentToken.api", query: ["token": "AAAAAAAAA"])
            #expect(missing == .notFound)
            #expect(notFound == .object(["success": .bool(false), "message": .string("Token is not associated with a study ID")]))
            #expect(try await h.call("mobileappstudy-resolveEnrollmentToken.api").1.exception == "Token is required")
            #expect(try await h.call("mobileappstudy-resolveEnrollmentToken.api", query: ["token": "abc1"]).1.exception
                == "Invalid token: 'ABC1'")

            // These change state, so they answer POST only; unknown actions are 404.
            let (method, refused, refusedHeaders) = try await h.call("mobileappstudy-enroll.api", query: ["studyId": "OTHER"], method: .get)
            #expect(method == .methodNotAllowed)
            #expect(refused.exception == "You must use the POST method when calling this action.")
            #expect(refusedHeaders[.allow] == "POST")
            // A number no 64-bit integer holds, where text is expected, is read as its text (found
            // by fuzzing: it used to stop the service).
            let (huge, hugeBody, _) = try await h.call(
                "mobileappstudy-withdrawFromStudy.api", json: ["participantId": -1e300, "delete": 1e300])
            #expect(huge == .badRequest)
            #expect(hugeBody.exception == "Invalid ParticipantId.")
            #expect(try await h.call("mobileappstudy-nothing.api").0 == .notFound)
        }
    }

    @Test(.needsCluster) func studiesFollowStudyMetadataAndOnlyRunningOnesEnroll() async throws {
        try await ResponseHarness.run { h in
            let now = Date()
            #expect(try await h.studyEvent("PAUSEME", version: 2, at: now) == .ok)
            #expect(try await h.studyEvent("PAUSEME", status: .paused, version: 2, at: now.addingTimeInterval(1)) == .ok)
            // A late delivery of the older event changes nothing.
            #expect(try await h.studyEvent("PAUSEME", status: .active, version: 2, at: now) == .ok)
            let (_, paused, _) = try await h.call(
                "mobileappstudy-enroll.api", query: ["studyId": "PAUSEME", "allowDataSharing": "true"])
            #expect(paused.exception == "Study with StudyId 'PAUSEME' is not enrolling participants")
            #expect(try await h.studyEvent("PAUSEME", status: .active, version: 2, at: now.addingTimeInterval(2)) == .ok)
            #expect(try await h.call("mobileappstudy-enroll.api", query: ["studyId": "PAUSEME", "allowDataSharing": "true"]).0 == .ok)
            // Only study-metadata sends study events.
            #expect(try await h.studyEvent("PAUSEME", as: .registration) == .forbidden)
        }
    }
}
