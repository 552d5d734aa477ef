import Foundation
import Logging
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The participant number (the data's `ParticipantId`) found by the hash registration holds, and
/// the hash by the number: one identity for a person in the console. Withdrawal keeps the link;
/// withdrawal with deletion removes it with the data.
@Suite(.needsCluster) struct ParticipantNumberTests {
    let admin = ResponseAdmin()

    func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    @Test func numbersAndHashesAreFoundEitherWayAndBoundedAndDeletionBreaksTheLink() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            var tokens: [String] = []
            for _ in 0..<3 {
                let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "SLEEPWELL", "allowDataSharing": "true"])
                tokens.append(try #require(enrolled["data"]?["appToken"]?.text))
            }
            let hashes = tokens.map(SecureToken.hash)
            let path = "/admin/v1/studies/SLEEPWELL/participant-numbers"
            let (status, body, _) = try await admin.send(
                client, .get, path + "?appTokenSHA256=\(hashes.joined(separator: ",")),\(String(repeating: "a", count: 64))", token: root)
            #expect(status == .ok)
            let found = try #require(try json(body)["participants"]?.array)
            try #require(found.count == 3, "the unknown hash names no one")
            let numbers = found.compactMap { $0["participantId"]?.number.map(Int64.init) }
            #expect(found.compactMap { $0["appTokenSHA256"]?.text } == hashes)
            let (_, one, _) = try await admin.send(client, .get, path + "?participant=\(numbers[1])", token: root)
            #expect(try json(one)["participants"]?.array?.first?["appTokenSHA256"]?.text == hashes[1])

            // Bad input is refused, naming the parameter.
            for query in [
                "", "?appTokenSHA256=xyz", "?participant=0", "?participant=-3", "?participant=abc",
                "?appTokenSHA256=\(hashes[0])&participant=1",
                // 64 bytes with a fullwidth Ａ, a hex digit to `Character`: not 64 hex digits.
                "?appTokenSHA256=\(String(repeating: "a", count: 61))%EF%BC%A1", "?appTokenSHA256=\(hashes[0]),\(String(repeating: "a", count: 61))%EF%BC%A1",
                "?appTokenSHA256=" + Array(repeating: hashes[0], count: 101).joined(separator: ","),
            ] {
                #expect(try await admin.send(client, .get, path + query, token: root).0 == .badRequest, "\(query.prefix(60))")
            }
            #expect(try await admin.send(client, .get, path + "?participant=1", token: nil).0 == .unauthorized)

            // Withdrawn: still linked. Withdrawn with their data deleted: no longer.
            _ = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": tokens[0]])
            _ = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": tokens[2], "delete": "true"])
            let (_, after, _) = try await admin.send(client, .get, path + "?appTokenSHA256=\(hashes.joined(separator: ","))", token: root)
            #expect(try json(after)["participants"]?.array?.compactMap { $0["appTokenSHA256"]?.text } == [hashes[0], hashes[1]])
            let (_, gone, _) = try await admin.send(client, .get, path + "?participant=\(numbers[2])", token: root)
            #expect(try json(gone)["participants"]?.array == [])
        }
    }

    /// Each study numbers its participants from 1, enrollments at once never share a number, and
    /// a number is never given again after its participant's data was deleted. The numbers are
    /// the ParticipantId of the LabKey views researchers read.
    @Test func eachStudyNumbersItsParticipantsFromOne() async throws {
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            #expect(try await h.studyEvent("NAPTIME") == .ok)
            func enroll(_ study: String) async throws -> String {
                let (status, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": study, "allowDataSharing": "true"])
                #expect(status == .ok)
                return try #require(enrolled["data"]?["appToken"]?.text)
            }
            // Eight enrollments at once in one study, two in the other.
            let sleepwell = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { try await enroll("SLEEPWELL") } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            let naptime = [try await enroll("NAPTIME"), try await enroll("NAPTIME")]
            func numbers(_ study: String, _ tokens: [String]) async throws -> [Int64] {
                let path = "/admin/v1/studies/\(study)/participant-numbers?appTokenSHA256="
                let (status, body, _) = try await admin.send(client, .get, path + tokens.map(SecureToken.hash).joined(separator: ","), token: root)
                #expect(status == .ok)
                return try json(body)["participants"]?.array?.compactMap { $0["participantId"]?.number.map(Int64.init) } ?? []
            }
            #expect(try await numbers("SLEEPWELL", sleepwell).sorted() == Array(1...8))
            #expect(try await numbers("NAPTIME", naptime).sorted() == [1, 2])

            // The last one leaves with their data; the next to join is 9, not 8 again.
            let last = try #require(
                try await postgres.query(
                    "SELECT app_token_hash FROM participants WHERE study_key = 'SLEEPWELL' AND number = 8", logger: Logger(label: "test")
                ).decode(String.self).collect().first)
            let leaving = try #require(sleepwell.first { SecureToken.hash($0) == last })
            _ = try await h.call("mobileappstudy-withdrawFromStudy.api", query: ["participantId": leaving, "delete": "true"])
            #expect(try await numbers("SLEEPWELL", [try await enroll("SLEEPWELL")]) == [9])

            // A number is unique in its study only, and the database holds it so.
            await #expect(throws: (any Error).self) {
                try await postgres.query("UPDATE participants SET number = 1 WHERE study_key = 'SLEEPWELL' AND number = 2", logger: Logger(label: "test"))
            }
        }
    }
}
