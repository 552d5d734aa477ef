import Foundation
import Logging
import NIOCore
import PostgresNIO
import HTTPTypes
import ResponseCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// A Sage study as the response service sees it: activity `sleep` imported from an assessment
/// (its design seeded as study-metadata serves it), and archives of its runs as Sage's clients
/// write them.
struct SageArchiveFixture: Sendable {
    static let study = "SAGESTUDY"
    static let activity = "sleep"

    /// A section, single and multiple choices, numbers, text and a duration; and a countdown,
    /// which makes it Sage-only (the MyStudies apps have no countdown step).
    static let assessment = #"""
        {"type": "assessment", "identifier": "sleep", "title": "Sleep", "steps": [
          {"type": "instruction", "identifier": "intro", "title": "Last night"},
          {"type": "countdown", "identifier": "ready", "duration": 3},
          {"type": "simpleQuestion", "identifier": "hours", "title": "Hours slept", "inputItem": {"type": "integer"}},
          {"type": "section", "identifier": "mood", "steps": [
            {"type": "choiceQuestion", "identifier": "feeling", "title": "How do you feel?", "baseType": "integer", "singleChoice": true,
             "choices": [{"value": 1, "text": "Tired"}, {"value": 2, "text": "Rested"}]},
            {"type": "choiceQuestion", "identifier": "factors", "title": "What kept you up?", "baseType": "string", "singleChoice": false,
             "choices": [{"value": "noise", "text": "Noise"}, {"value": "light", "text": "Light"}, {"value": "worry", "text": "Worry"}]}
          ]},
          {"type": "simpleQuestion", "identifier": "notes", "title": "Anything else?", "optional": true, "inputItem": {"type": "string"}},
          {"type": "simpleQuestion", "identifier": "nap", "title": "Naps", "inputItem": {"type": "duration"}}
        ]}
        """#

    static func result(runId: String, hours: Int = 7) -> String {
        """
        {"type": "assessment", "identifier": "sleep", "assessmentIdentifier": "sleep", "taskRunUUID": "\(runId)",
         "startDate": "2026-11-20T08:00:00.000-05:00", "endDate": "2026-11-20T08:03:00.000-05:00",
         "stepHistory": [
           {"type": "base", "identifier": "intro", "startDate": "2026-11-20T08:00:00.000-05:00", "endDate": "2026-11-20T08:00:05.000-05:00"},
           {"type": "answer", "identifier": "hours", "answerType": {"type": "integer"}, "value": \(hours),
            "startDate": "2026-11-20T08:00:05.000-05:00", "endDate": "2026-11-20T08:00:15.000-05:00"},
           {"type": "section", "identifier": "mood", "startDate": "2026-11-20T08:00:15.000-05:00", "endDate": "2026-11-20T08:01:00.000-05:00",
            "stepHistory": [
              {"type": "answer", "identifier": "feeling", "answerType": {"type": "integer"}, "value": 2,
               "startDate": "2026-11-20T08:00:15.000-05:00", "endDate": "2026-11-20T08:00:30.000-05:00"},
              {"type": "answer", "identifier": "factors", "answerType": {"type": "array", "baseType": "string"}, "value": ["noise", "light"],
               "startDate": "2026-11-20T08:00:30.000-05:00", "endDate": "2026-11-20T08:01:00.000-05:00"}
            ]},
           {"type": "answer", "identifier": "notes", "answerType": {"type": "string"}, "value": null,
            "startDate": "2026-11-20T08:01:00.000-05:00", "endDate": "2026-11-20T08:01:10.000-05:00"},
           {"type": "answer", "identifier": "nap", "answerType": {"type": "duration"}, "value": 1800,
            "startDate": "2026-11-20T08:01:10.000-05:00", "endDate": "2026-11-20T08:03:00.000-05:00"}
         ]}
        """
    }

    static func metadata(files: [String]) -> String {
        let listed = files.map { #"{"filename": "\#($0)", "timestamp": "2026-11-20T08:03:00.000-05:00", "contentType": "application/json"}"# }
        return """
            {"appName": "Sleep Study", "appVersion": "1.0 (12)", "deviceInfo": "iPhone15,2; iOS/17.1", "deviceTypeIdentifier": "iPhone15,2",
             "files": [\(listed.joined(separator: ", "))]}
            """
    }

    /// An archive as iOS writes it: the manifest, the result, a motion file.
    static func archive(runId: String = UUID().uuidString, hours: Int = 7) -> [UInt8] {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(metadata(files: ["assessmentResult.json", "motion.json"]).utf8))
        zip.add("assessmentResult.json", Array(result(runId: runId, hours: hours).utf8))
        zip.add("motion.json", Array(#"[{"uptime": 1.5, "x": 0.1, "y": 0.2, "z": 0.98}]"#.utf8))
        return zip.bytes()
    }

    /// An older client's archive: answers.json (arrays as comma-joined text) and info.json.
    static func flatArchive(hours: Int = 6) -> [UInt8] {
        var zip = ZipWriter()
        zip.add("metadata.json", Array(metadata(files: ["answers.json", "motion.json"]).utf8))
        zip.add("info.json", Array(#"{"item": "sleep", "dataFilename": "answers.json", "format": "v2_generic", "appName": "Sleep Study", "appVersion": "1.0", "phoneInfo": "iPhone", "files": []}"#.utf8))
        zip.add("answers.json", Array(#"{"hours": \#(hours), "mood_feeling": 1, "mood_factors": "worry,noise", "notes": "slept badly", "nap": "600"}"#.utf8))
        zip.add("motion.json", Array("[]".utf8))
        return zip.bytes()
    }

    /// The study announced with activity `sleep` at version 1.0, and its design as study-metadata
    /// serves designs of imported assessments.
    func announce(_ h: ResponseHarness) async throws {
        let activities = [StudyEvent.ActivityVersion(activityId: Self.activity, version: 1, label: "1.0", type: "questionnaire")]
        #expect(try await h.studyEvent(Self.study, activities: activities) == .ok)
        let design = #"{"activity": {"metadata": {"activityId": "sleep", "version": "1.0"}, "steps": []}, "assessment": \#(Self.assessment)}"#
        try await h.sql(
            """
            INSERT INTO activity_designs (study_key, activity_id, version, design)
            VALUES (\(Self.study), \(Self.activity), '1.0', \(design)::jsonb)
            """)
    }

    func enroll(_ h: ResponseHarness) async throws -> String {
        let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": Self.study, "allowDataSharing": "true"])
        return try #require(enrolled["data"]?["appToken"]?.text)
    }

    /// `POST /sage/v1/studies/{study}/archives` with `body`.
    func post(
        _ h: ResponseHarness, _ body: [UInt8], appToken: String?, study: String = study, headers extra: HTTPFields = [:]
    ) async throws -> (HTTPResponse.Status, JSONValue) {
        var headers = extra
        if let appToken { headers[.authorization] = "Bearer \(appToken)" }
        headers[.contentType] = "application/zip"
        return try await h.client.execute(
            uri: "/sage/v1/studies/\(study)/archives", method: .post, headers: headers, body: ByteBuffer(bytes: body)
        ) { response in
            (response.status, (try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: response.body))) ?? .null)
        }
    }

    func count(_ h: ResponseHarness, _ table: String) async throws -> Int {
        var value = -1
        for try await count in try await h.postgres.query(
            PostgresQuery(unsafeSQL: "SELECT count(*)::int FROM \(table)"), logger: Logger(label: "test")
        ).decode(Int.self) { value = count }
        return value
    }

    /// The rows of list `name` of the study, oldest first, as JSON objects.
    func rows(_ h: ResponseHarness, list name: String, study: String = study) async throws -> [JSONValue] {
        var table: String?
        for try await found in try await h.postgres.query(
            "SELECT sql_name FROM response_lists WHERE study_key = \(study) AND lower(name) = lower(\(name))",
            logger: Logger(label: "test")
        ).decode(String.self) { table = found }
        let sqlName = try #require(table, "no list \(name)")
        let sql = "SELECT row_to_json(t)::text FROM \(SQLName.quoted(SQLName.schema(forStudy: study))).\(SQLName.quoted(sqlName)) t ORDER BY \"Key\""
        var rows: [JSONValue] = []
        for try await text in try await h.postgres.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test")).decode(String.self) {
            rows.append(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))
        }
        return rows
    }
}
