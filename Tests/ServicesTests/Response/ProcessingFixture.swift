import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The original LabKey server's DYNAMICSCHEMASTUDY designs and responses (`Tests/Fixtures/labkey`),
/// and the steps that submit them and wait for the processor.
struct ProcessingFixture: Sendable {
    static let study = "DYNAMICSCHEMASTUDY"

    /// (activity, version) of every pair, in the order the original's tests applied them.
    static let pairs: [(String, String)] = [
        ("NewSurvey", "1"), ("NewSurvey", "2"), ("NewSurvey", "3"), ("NewSurvey", "4"), ("NewSurvey", "5"),
        ("NewSurvey", "6"), ("NewSurvey", "7"), ("NewSurvey", "8"), ("NewSurvey", "9"), ("NewSurvey", "10"),
        ("NewSurvey", "11"), ("NewSurvey", "13"), ("FKC-74", "1.0"), ("TOH-75", "1.0"), ("SSM-76", "1.0"),
        ("OtherOption", "1"), ("OtherOptionUpdate", "1"), ("OtherOptionUpdate", "2"), ("OtherOptionBlanks", "1"),
        ("empty", "1.0"),
    ]

    static func file(_ activity: String, _ version: String, response: Bool = false) -> URL {
        Conformance.labkey.appendingPathComponent(
            "SurveyMetadata/\(study)_\(activity)_\(version)\(response ? "--RESPONSE" : "").json")
    }

    func processor(_ h: ResponseHarness, storesInFlight: Int = 1) -> ResponseProcessor {
        let logger = Logger(label: "test")
        let tables = StudyTables(client: h.postgres, access: h.access, logger: logger)
        return ResponseProcessor(
            client: h.postgres,
            designs: DesignSource(
                client: h.postgres,
                internalClient: InternalClient(
                    keys: try! InternalKeys(ownName: .response, signingKey: TestConfiguration.keys[.response]!, callerKeys: nil),
                    peers: [:]),
                tables: tables, logger: logger),
            tables: tables, writer: ResponseWriter(logger: logger), metrics: ServiceMetrics(), storesInFlight: storesInFlight,
            logger: logger)
    }

    /// Waits for the service's own processor to settle response `id` (processed, error, or put
    /// off because its design cannot be fetched); returns its status and error.
    func settled(_ h: ResponseHarness, _ id: Int64) async throws -> (String, String?) {
        try await eventually("response \(id) settled", within: .seconds(30), poll: .milliseconds(50)) { () -> (String, String?)? in
            var found: (String, String?)?
            let rows = try await h.postgres.query(
                "SELECT status, error_message FROM responses WHERE id = \(id)", logger: Logger(label: "test"))
            for try await row in rows.decode((String, String?).self) { found = row }
            // Claiming counts an attempt; a response put back to wait keeps the reason.
            guard let (status, error) = found, status != "pending" || error != nil else { return nil }
            return (status, error)
        }
    }

    /// Seeds the design as fetched (a malformed one as its raw text cannot be stored as JSON, so
    /// it is left to be "fetched" and fail), submits the response, returns its id.
    func submit(_ h: ResponseHarness, appToken: String, activity: String, version: String) async throws -> Int64 {
        let designText = try String(contentsOf: Self.file(activity, version), encoding: .utf8)
        if (try? JSONDecoder().decode(JSONValue.self, from: Data(designText.utf8))) != nil {
            try await h.sql(
                """
                INSERT INTO activity_designs (study_key, activity_id, version, design)
                VALUES (\(Self.study), \(activity), \(version), \(designText)::jsonb) ON CONFLICT DO NOTHING
                """)
        }
        let data = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.file(activity, version, response: true)))
        let (status, body, _) = try await h.call(
            "mobileappstudy-processResponse.api",
            json: ["type": "SurveyResponse", "participantId": appToken,
                   "metadata": ["activityId": activity, "version": version], "data": data])
        #expect(status == .ok, "\(activity) \(version): \(body)")
        return try await latest(h)
    }

    /// NewSurvey version 1's design in `study`, as if it had been fetched.
    func seedNewSurvey(_ h: ResponseHarness, study: String = study) async throws {
        let design = try String(contentsOf: Self.file("NewSurvey", "1"), encoding: .utf8)
        try await h.sql(
            """
            INSERT INTO activity_designs (study_key, activity_id, version, design)
            VALUES (\(study), 'NewSurvey', '1', \(design)::jsonb) ON CONFLICT DO NOTHING
            """)
    }

    /// The one number `sql` selects.
    func count(_ h: ResponseHarness, _ sql: String) async throws -> Int { try await h.postgres.count(PostgresQuery(unsafeSQL: sql)) }

    func latest(_ h: ResponseHarness) async throws -> Int64 {
        for try await id in try await h.postgres.query("SELECT max(id) FROM responses", logger: Logger(label: "test")).decode(Int64.self) {
            return id
        }
        return 0
    }

    /// A table of the study's schema as JSON objects, oldest row first.
    func rows(_ h: ResponseHarness, _ table: String) async throws -> [JSONValue] {
        let sql = "SELECT row_to_json(t)::text FROM \(SQLName.quoted(SQLName.schema(forStudy: Self.study))).\(SQLName.quoted(table)) t ORDER BY \"Key\""
        var found: [JSONValue] = []
        for try await text in try await h.postgres.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test")).decode(String.self) {
            found.append(try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))
        }
        return found
    }
}
