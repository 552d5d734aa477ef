import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Three participants with processed responses, for the participant query calls: A and B of one
/// study with the same answers, C of another; and the executeSQL call as the apps make it.
struct QueryFixture: Sendable {
    static let study = "DYNAMICSCHEMASTUDY"

    static let otherStudy = "MYTESTSTUDY"

    /// Two participants of one study (A and B, with the same answers) and one (C) of another,
    /// each with their responses processed into tables.
    struct Population {
        var a: String
        var b: String
        var c: String
        var aId: Int64
        var bId: Int64
        var cId: Int64
    }

    func populate(_ h: ResponseHarness) async throws -> Population {
        let processing = ProcessingFixture()
        try await h.studyEvent(Self.study)
        try await h.studyEvent(Self.otherStudy)
        func enroll(_ study: String) async throws -> String {
            let (_, body, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": study, "allowDataSharing": "true"])
            return try #require(body["data"]?["appToken"]?.text)
        }
        let a = try await enroll(Self.study)
        let b = try await enroll(Self.study)
        let c = try await enroll(Self.otherStudy)
        for token in [a, b] {
            for (activity, version) in [("NewSurvey", "1"), ("FKC-74", "1.0")] {
                let id = try await processing.submit(h, appToken: token, activity: activity, version: version)
                #expect(try await processing.settled(h, id).0 == "processed")
            }
        }
        // MYTESTSTUDY's response file is a whole request, as the app sent it.
        let design = try String(
            contentsOf: Conformance.labkey.appendingPathComponent("SurveyMetadata/MYTESTSTUDY_NewSurvey_1.json"), encoding: .utf8)
        try await h.sql(
            """
            INSERT INTO activity_designs (study_key, activity_id, version, design)
            VALUES (\(Self.otherStudy), 'NewSurvey', '1', \(design)::jsonb)
            """)
        var request = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: Conformance.labkey.appendingPathComponent("SurveyMetadata/MYTESTSTUDY_NewSurvey_1--RESPONSE.json")))
                as? [String: Any])
        request["participantId"] = c
        let (status, body, _) = try await h.call("mobileappstudy-processResponse.api", json: request)
        #expect(status == .ok, "\(body)")
        #expect(try await processing.settled(h, try await processing.latest(h)).0 == "processed")

        var ids: [Int64] = []
        for token in [a, b, c] {
            for try await id in try await h.postgres.query(
                "SELECT number FROM participants WHERE app_token_hash = \(SecureToken.hash(token))", logger: Logger(label: "test")
            ).decode(Int64.self) { ids.append(id) }
        }
        return Population(a: a, b: b, c: c, aId: ids[0], bId: ids[1], cId: ids[2])
    }

    func executeSQL(_ h: ResponseHarness, _ token: String, _ sql: String, method: HTTPRequest.Method = .get)
        async throws -> (HTTPResponse.Status, JSONValue)
    {
        let (status, body, _) = try await h.call(
            "mobileappstudy-executeSQL.api", query: ["participantId": token, "sql": sql], method: method)
        return (status, body)
    }
}
