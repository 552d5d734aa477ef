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
import StudyModels
import Testing
import TestSupport

/// Participant properties: uploaded per enrollment token, checked
/// all or nothing, pre-enrollment values returned by `validateEnrollmentToken`, and each
/// participant's row readable by them alone.
@Suite(.needsCluster) struct ParticipantPropertyTests {
    static let properties = [
        ParticipantProperty(key: "externalId", timing: .preEnrollment, dataType: .string),
        ParticipantProperty(key: "surgeryDate", timing: .preEnrollment, dataType: .date, useAsAnchor: true),
        ParticipantProperty(key: "weight", timing: .postEnrollment, dataType: .decimal),
    ]

    @Test func uploadedValuesReachValidationAndTheParticipantsOwnQueries() async throws {
        let admin = ResponseAdmin()
        try await admin.withServices { client, _, root, postgres in
            let h = ResponseHarness(client: client, postgres: postgres, databaseURL: "")
            let path = "/admin/v1/studies/SLEEPWELL/participant-properties"
            // SLEEPWELL as published has no properties yet.
            let (none, noneBody, _) = try await admin.sendTyped(client, .put, path, token: root, csvBody: "token,externalId\n")
            #expect(none == .unprocessableContent, "\(noneBody)")
            // A later version declares three.
            #expect(try await h.studyEvent("SLEEPWELL", version: 99, properties: Self.properties) == .ok)
            let tokens = try await h.tokens(3, study: "SLEEPWELL")

            // Every mistake reported, nothing stored.
            let bad = """
                token,externalId,surgeryDate,height
                \(tokens[0]),EXT-1,not-a-date,180
                AAAAAAAAA,EXT-2,2026-01-15,
                """
            let (refused, refusedBody, _) = try await admin.sendTyped(client, .put, path, token: root, csvBody: bad)
            #expect(refused == .unprocessableContent)
            let refusals = try JSONDecoder().decode(JSONValue.self, from: Data(refusedBody.utf8))["error"]?["problems"]?.array ?? []
            let messages = refusals.compactMap { $0["message"]?.text }
            // Each refusal names the CSV line a spreadsheet shows (the header is line 1).
            #expect(
                Set(refusals.compactMap { $0["pointer"]?.text })
                    == ["/lines/2/surgeryDate", "/lines/2/height", "/lines/3/height", "/lines/3/token"], "\(refusedBody)")
            #expect(messages.contains { $0.hasPrefix("expected a date") })
            #expect(messages.contains("no participant property 'height' in this study"))
            #expect(messages.contains { $0.hasPrefix("Invalid token") || $0.hasPrefix("Unknown token") })
            #expect(
                try await postgres.query(
                    "SELECT count(*)::int FROM \"study_SLEEPWELL\".\"ParticipantProperties\"", logger: Logger(label: "test")
                ).decode(Int.self).single() == 0)

            // Good values, one lower-case token with spaces (normalised as at enrollment).
            let good = """
                token,externalId,surgeryDate
                \(tokens[0]),EXT-1,2026-01-15
                " \(tokens[1].lowercased()) ","EXT-2, with comma",2026-02-01T09:30:00-05:00
                """
            let (stored, storedBody, _) = try await admin.sendTyped(client, .put, path, token: root, csvBody: good)
            #expect(stored == .ok, "\(storedBody)")

            // validateEnrollmentToken returns the pre-enrollment values of that token only.
            let (_, validated, _) = try await h.call(
                "mobileappstudy-validateEnrollmentToken.api", query: ["studyId": "SLEEPWELL", "token": tokens[0]])
            let values = Dictionary(
                uniqueKeysWithValues: (validated["preEnrollmentParticipantProperties"]?.array ?? []).compactMap { item in
                    item["propertyId"]?.text.map { ($0, item["value"] ?? .null) }
                })
            #expect(values["externalId"] == .string("EXT-1"))
            #expect(values["surgeryDate"]?.text?.hasPrefix("2026-01-15T00:00:00") == true)
            #expect(values["weight"] == nil)

            // After enrollment each participant reads their own row, and only it.
            var appTokens: [String] = []
            for token in tokens.prefix(3) {
                let (_, enrolled, _) = try await h.call(
                    "mobileappstudy-enroll.api", query: ["studyId": "SLEEPWELL", "token": token, "allowDataSharing": "true"])
                appTokens.append(try #require(enrolled["data"]?["appToken"]?.text))
            }
            let query = "SELECT externalId, surgeryDate, weight FROM ParticipantProperties"
            let (_, first, _) = try await h.call(
                "mobileappstudy-executeSQL.api", query: ["participantId": appTokens[1], "sql": query], method: .get)
            let rows = first["rows"]?.array ?? []
            #expect(rows.count == 1)
            #expect(rows.first?["data"]?["externalId"]?["value"] == .string("EXT-2, with comma"))
            #expect(rows.first?["data"]?["surgeryDate"]?["value"] == .string("2026-02-01 09:30:00.000"))
            // The third token had nothing uploaded: an empty row of its own.
            let (_, third, _) = try await h.call(
                "mobileappstudy-executeSQL.api", query: ["participantId": appTokens[2], "sql": query], method: .get)
            #expect(third["rows"]?.array?.count == 1)
            #expect(third["rows"]?.array?.first?["data"]?["externalId"]?["value"] == .null)

            // A later upload (JSON) reaches the enrolled participant's row.
            let json = #"{"rows": [{"token": "\#(tokens[0])", "values": {"weight": 72.5}}]}"#
            let (updated, updatedBody, _) = try await admin.sendTyped(client, .put, path, token: root, body: json, type: "application/json")
            #expect(updated == .ok, "\(updatedBody)")
            let (_, mine, _) = try await h.call(
                "mobileappstudy-executeSQL.api", query: ["participantId": appTokens[0], "sql": query], method: .get)
            #expect(mine["rows"]?.array?.first?["data"]?["weight"]?["value"] == .number(72.5))
            #expect(mine["rows"]?.array?.first?["data"]?["externalId"]?["value"] == .string("EXT-1"))
        }
    }
}
