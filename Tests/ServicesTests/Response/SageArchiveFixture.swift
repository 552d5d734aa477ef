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

    static let assessment = SageArchiveSamples.assessment
    static func result(runId: String, hours: Int = 7) -> String { SageArchiveSamples.result(runId: runId, hours: hours) }
    static func metadata(files: [String]) -> String { SageArchiveSamples.metadata(files: files) }
    static func archive(runId: String = UUID().uuidString, hours: Int = 7) -> [UInt8] { SageArchiveSamples.archive(runId: runId, hours: hours) }
    static func flatArchive(hours: Int = 6) -> [UInt8] { SageArchiveSamples.flatArchive(hours: hours) }

    /// The study announced with activity `sleep` at version 1.0, and its design as study-metadata
    /// serves designs of imported assessments.
    /// Another assessment (`activity`, `assessment`) in its place when given.
    func announce(_ h: ResponseHarness, activity: String = Self.activity, assessment: String = Self.assessment) async throws {
        let activities = [StudyEvent.ActivityVersion(activityId: activity, version: 1, label: "1.0", type: "questionnaire")]
        #expect(try await h.studyEvent(Self.study, activities: activities) == .ok)
        let design = #"{"activity": {"metadata": {"activityId": "\#(activity)", "version": "1.0"}, "steps": []}, "assessment": \#(assessment)}"#
        try await h.sql(
            """
            INSERT INTO activity_designs (study_key, activity_id, version, design)
            VALUES (\(Self.study), \(activity), '1.0', \(design)::jsonb)
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

    func count(_ h: ResponseHarness, _ table: String) async throws -> Int { try await h.postgres.count(rowsOf: table) }

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
