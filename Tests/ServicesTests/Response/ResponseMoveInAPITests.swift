import Foundation
import HTTPTypes
import HummingbirdTesting
import PostgresNIO
import StudyModels
import Testing
import TestSupport

/// `POST /admin/v1/studies/{studyId}/move-in/responses` refusing what is not a part, or more than a
/// part may be, with where, and storing nothing (the import through `studystack-import` is
/// `MoveInParticipantsTests`).
@Suite(.needsCluster) struct ResponseMoveInAPITests {
    let admin = ResponseAdmin()
    static let path = "/admin/v1/studies/SLEEPWELL/move-in/responses"

    static func part(_ responses: [String]) -> String {
        #"{"source": "test", "responses": ["# + responses.joined(separator: ",") + "]}"
    }

    static let stored = #"""
        {"studyId": "SLEEPWELL", "document": "projects/p/databases/(default)/documents/SLEEPWELL-RESPONSES/SLEEPWELL/Activities/r1",
         "fields": {"participantId": "nobody-here", "activityId": "sleep", "version": "1", "createdTimestamp": "1790784000000",
                    "results": [{"resultType": "scale", "key": "hours", "skipped": false, "value": 7}]}}
        """#

    @Test func whatIsNotAPartIsRefusedWithWhereAndNothingIsStored() async throws {
        try await admin.withServices { client, _, root, postgres in
            func refusal(_ body: String, dryRun: String = "false") async throws -> (HTTPResponse.Status, JSONValue?) {
                let (status, text, _) = try await admin.send(client, .post, Self.path + "?dryRun=" + dryRun, token: root, body: body)
                return (status, try? JSONValue.parse(Array(text.utf8), budget: .init(maxBytes: 1 << 20, maxNodes: 10_000)))
            }
            let notJSON = try await refusal("{\"source\": ")
            #expect(notJSON.0 == .unprocessableContent)
            #expect(notJSON.1?["error"]?["problems"]?.array?.first?["message"]?.string?.hasPrefix("part is not JSON") == true)
            let noDocument = try await refusal(Self.part([#"{"studyId": "SLEEPWELL", "fields": {}}"#]))
            #expect(noDocument.0 == .unprocessableContent)
            #expect(noDocument.1?["error"]?["problems"]?.array?.first?["pointer"]?.string == "/responses/0/document")
            let badTime = try await refusal(Self.part([#"{"studyId": "S", "document": "d", "createTime": 5, "fields": {}}"#]))
            #expect(badTime.1?["error"]?["problems"]?.array?.first?["pointer"]?.string == "/responses/0/createTime")
            #expect(try await refusal(Self.part([Self.stored]), dryRun: "maybe").0 == .badRequest)
            // More responses than a part holds.
            #expect(try await refusal(Self.part(Array(repeating: Self.stored, count: 1_001))).0 == .badRequest)
            // More values than a part may build, within the body's limit: refused before it is built.
            let flood = #"{"source": "s", "responses": ["# + Array(repeating: "0", count: 4_100_000).joined(separator: ",") + "]}"
            let over = try await refusal(flood)
            #expect(over.0 == .unprocessableContent)
            #expect(over.1?["error"]?["problems"]?.array?.first?["message"]?.string?.contains("more than this text may hold") == true)
            // Another study's, or no study.
            #expect(try await admin.send(client, .post, "/admin/v1/studies/NOSUCH/move-in/responses", token: root, body: Self.part([])).0 == .notFound)
            // Without a token.
            #expect(try await admin.send(client, .post, Self.path, token: nil, body: Self.part([Self.stored])).0 == .unauthorized)

            // A well-formed part whose participant is not here: counted, listed, not stored.
            let (status, text, _) = try await admin.send(client, .post, Self.path + "?dryRun=false", token: root, body: Self.part([Self.stored]))
            #expect(status == .ok, "\(text)")
            let report = try JSONDecoder().decode(ResponseMoveInReport.self, from: Data(text.utf8))
            #expect(report.counts.read == 1 && report.counts.unknownParticipant == 1 && report.counts.new == 0)
            #expect(report.findings.contains { $0.message.contains("move the participants in first") })
            let rows = try await postgres.query("SELECT count(*)::int FROM responses", logger: .init(label: "test"))
            var count = -1
            for try await value in rows.decode(Int.self) { count = value }
            #expect(count == 0)
        }
    }
}
