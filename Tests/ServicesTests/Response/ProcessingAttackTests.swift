import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ResponseHTTP
import ResponseService
import ServiceKit
import ServiceKitHTTP
import StudyModels
import Testing
import TestSupport

/// One participant's upload must not hold up processing for everyone: arrays are bounded, rows
/// are written set-wise, and studies take turns at the processor.
@Suite(.needsCluster) struct ProcessingAttackTests {
    let processing = ProcessingFixture()
    static let study = ProcessingFixture.study

    func enroll(_ h: ResponseHarness, study: String) async throws -> String {
        try await h.studyEvent(study)
        let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": study, "allowDataSharing": "true"])
        return try #require(enrolled["data"]?["appToken"]?.text)
    }

    /// NewSurvey version 1's conformance response with `selections` options chosen, as run `run`.
    func submit(_ h: ResponseHarness, appToken: String, study: String = study, selections: Int?, run: Int) async throws -> Int64 {
        try await processing.seedNewSurvey(h, study: study)
        var data = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: ProcessingFixture.file("NewSurvey", "1", response: true)))
                as? [String: Any])
        if let selections {
            var results = try #require(data["results"] as? [[String: Any]])
            let index = try #require(results.firstIndex { $0["key"] as? String == "TextChoiceField" })
            results[index]["value"] = (0..<selections).map { "choice \($0)" }
            data["results"] = results
        }
        let (status, body, _) = try await h.call(
            "mobileappstudy-processResponse.api",
            json: ["type": "SurveyResponse", "participantId": appToken,
                   "metadata": ["activityId": "NewSurvey", "version": "1", "activityRunId": "\(run)"], "data": data])
        #expect(status == .ok, "\(body)")
        return try await processing.latest(h)
    }

    func count(_ h: ResponseHarness, _ sql: String) async throws -> Int { try await processing.count(h, sql) }

    @Test func fiveHundredSelectionsAreStoredSetWise() async throws {
        try await ResponseHarness.run { h in
            let token = try await enroll(h, study: Self.study)
            let id = try await submit(h, appToken: token, selections: 500, run: 1)
            #expect(try await processing.settled(h, id).0 == "processed")
            var location: (String, String)?
            for try await row in try await h.postgres.query(
                """
                SELECT s.schema_name, l.sql_name FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
                WHERE l.study_key = \(Self.study) AND lower(l.name) = 'newsurveytextchoicefield'
                """, logger: Logger(label: "test")
            ).decode((String, String).self) { location = row }
            let (schema, table) = try #require(location)
            #expect(try await count(h, "SELECT count(*)::int FROM \"\(schema)\".\"\(table)\"") == 500)
            #expect(try await count(h, "SELECT count(DISTINCT \"TextChoiceField\")::int FROM \"\(schema)\".\"\(table)\"") == 500)
            // Every selection points at the one top row.
            #expect(try await count(h, "SELECT count(DISTINCT \"NewSurveyId\")::int FROM \"\(schema)\".\"\(table)\"") == 1)
            #expect(try await count(h, "SELECT count(*)::int FROM response_metadata WHERE response_id = \(id)") > 0)
        }
    }

    @Test func aChoiceAnswerPastTheBoundIsRefusedWhole() async throws {
        try await ResponseHarness.run { h in
            let token = try await enroll(h, study: Self.study)
            let id = try await submit(h, appToken: token, selections: 20_000, run: 1)
            let (status, error) = try await processing.settled(h, id)
            #expect(status == "error")
            #expect(error?.contains("has 20000 selections; at most 500 are stored") == true, "\(error ?? "")")
            #expect(try await count(h, "SELECT count(*)::int FROM response_metadata WHERE response_id = \(id)") == 0)
        }
    }

    @Test func oneStudysBacklogDoesNotHoldUpAnother() async throws {
        try await ResponseHarness.run(overrides: ["processing.enabled": "false"]) { h in
            let busy = try await enroll(h, study: Self.study)
            var backlog: [Int64] = []
            for run in 1...10 { backlog.append(try await submit(h, appToken: busy, selections: nil, run: run)) }
            let quiet = try await enroll(h, study: "QUIETSTUDY")
            let late = try await submit(h, appToken: quiet, study: "QUIETSTUDY", selections: nil, run: 1)
            try #require(backlog.allSatisfy { $0 < late })

            let processor = processing.processor(h)
            #expect(try await processor.processNext())
            #expect(try await processor.processNext())
            // The quiet study's one response went second, not eleventh.
            #expect(try await processing.settled(h, late).0 == "processed")
            #expect(try await count(h, "SELECT count(*)::int FROM responses WHERE status = 'pending' AND study_key = '\(Self.study)'") == 9)
        }
    }
}
