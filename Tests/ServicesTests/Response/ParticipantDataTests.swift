import Foundation
import HTTPTypes
import Logging
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// `GET /admin/v1/studies/{studyId}/participant-data`: what the console's participant page reads
/// from the response service in one call, by the participant's number or by the hash registration
/// holds: the link between the two, and their latest responses, no one else's.
@Suite(.needsCluster) struct ParticipantDataTests {
    let admin = ResponseAdmin()
    let path = "/admin/v1/studies/SLEEPWELL/participant-data"

    func reply(_ sent: (HTTPResponse.Status, String, HTTPFields)) throws -> ParticipantDataReply {
        try #require(sent.0 == .ok, "\(sent.1)")
        return try JSONDecoder.iso8601.decode(ParticipantDataReply.self, from: Data(sent.1.utf8))
    }

    @Test func aParticipantsLatestResponsesAreFoundByNumberOrHashAndNoOneElses() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let empty = try String(contentsOf: ProcessingFixture.file("empty", "1.0"), encoding: .utf8)
            try await h.sql(
                """
                INSERT INTO activity_designs (study_key, activity_id, version, design)
                VALUES ('SLEEPWELL', 'empty', '1.0', \(empty)::jsonb)
                """)
            var tokens: [String] = []
            for _ in 0..<2 {
                let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
                tokens.append(try #require(enrolled["data"]?["appToken"]?.text))
            }
            // Three responses from the first, one from the second between them.
            for (index, token) in [tokens[0], tokens[0], tokens[1], tokens[0]].enumerated() {
                let (submitted, body, _) = try await h.call(
                    "mobileappstudy-processResponse.api",
                    json: ["type": "SurveyResponse", "participantId": token, "metadata": ["activityId": "empty", "version": "1.0"],
                           "data": ["results": [], "endTime": "2026-03-0\(index + 1)T10:00:00.000+0000"]])
                #expect(submitted == .ok, "\(body)")
            }
            let hash = SecureToken.hash(tokens[0])
            let byHash = try reply(try await admin.send(client, .get, path + "?appTokenSHA256=\(hash)", token: root))
            let number = try #require(byHash.participantId)
            #expect(byHash.appTokenSHA256 == hash)
            try #require(byHash.responses.count == 3)
            #expect(byHash.responses.allSatisfy { $0.participantId == number })
            #expect(byHash.responses.map(\.id) == byHash.responses.map(\.id).sorted(), "oldest first")
            #expect(byHash.archives.isEmpty)
            let byNumber = try reply(try await admin.send(client, .get, path + "?participant=\(number)", token: root))
            // The same participant and responses (their processing may move on in between).
            #expect(byNumber.participantId == number && byNumber.appTokenSHA256 == hash)
            #expect(byNumber.responses.map(\.id) == byHash.responses.map(\.id))
            // A limit keeps the latest.
            let latest = try reply(try await admin.send(client, .get, path + "?participant=\(number)&limit=2", token: root))
            #expect(latest.responses.map(\.id) == Array(byHash.responses.map(\.id).suffix(2)))
            // A hash no data arrived under: no number, nothing listed.
            let unknown = String(repeating: "ab", count: 32)
            let none = try reply(try await admin.send(client, .get, path + "?appTokenSHA256=\(unknown.uppercased())", token: root))
            #expect(none == ParticipantDataReply(participantId: nil, appTokenSHA256: unknown, responses: [], archives: []))
            #expect(try await admin.send(client, .get, path + "?participant=99999", token: root).0 == .notFound)

            // Bad questions are refused by name; no one unsigned is answered.
            for query in [
                "", "?participant=0", "?participant=-1", "?participant=abc", "?appTokenSHA256=xyz", "?participant=1&appTokenSHA256=\(hash)",
                "?participant=1&limit=0", "?participant=1&limit=1001", "?participant=1&archives=0", "?participant=1&archives=501",
                "?participant=\(String(repeating: "9", count: 40))",
                // 64 bytes with a fullwidth Ａ, a hex digit to `Character`: not 64 hex digits.
                "?appTokenSHA256=\(String(repeating: "a", count: 61))%EF%BC%A1",
            ] {
                #expect(try await admin.send(client, .get, path + query, token: root).0 == .badRequest, "\(query)")
            }
            #expect(try await admin.send(client, .get, path + "?participant=\(number)", token: nil).0 == .unauthorized)

            // Their data deleted when they left: the number stays, with no link and nothing listed.
            _ = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": tokens[0], "delete": "true"])
            let gone = try reply(try await admin.send(client, .get, path + "?participant=\(number)", token: root))
            #expect(gone == ParticipantDataReply(participantId: number, appTokenSHA256: nil, responses: [], archives: []))
            // And their hash names no one now.
            let unlinked = try reply(try await admin.send(client, .get, path + "?appTokenSHA256=\(hash)", token: root))
            #expect(unlinked.participantId == nil)
        }
    }
}
