import Foundation
import Logging
import PostgresNIO
import ResponseCore
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// The processor stores a batch of responses together (one transaction, every list's rows in one
/// statement), and still all or nothing per response: a response at fault, whether the rules or
/// PostgreSQL refuse it, leaves no row and does not fail the others.
@Suite struct BatchProcessingTests {
    let processing = ProcessingFixture()
    static let study = ProcessingFixture.study

    func enroll(_ h: ResponseHarness) async throws -> String {
        let (_, enrolled, _) = try await h.call(
            "mobileappstudy-enroll.api", json: ["studyId": Self.study, "allowDataSharing": "true"])
        return try #require(enrolled["data"]?["appToken"]?.text)
    }

    /// NewSurvey version 1's conformance response, its short text answer set to `text` (a mark
    /// to find its row by) and, if given, its scale answer to `scale`.
    func submit(_ h: ResponseHarness, appToken: String, text: String, scale: Any? = nil) async throws -> Int64 {
        var data = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: ProcessingFixture.file("NewSurvey", "1", response: true)))
                as? [String: Any])
        var results = try #require(data["results"] as? [[String: Any]])
        let textIndex = try #require(results.firstIndex { $0["key"] as? String == "ShortTextField" })
        results[textIndex]["value"] = text
        if let scale {
            let scaleIndex = try #require(results.firstIndex { $0["key"] as? String == "ScaleField" })
            results[scaleIndex]["value"] = scale
        }
        data["results"] = results
        let (status, body, _) = try await h.call(
            "mobileappstudy-processResponse.api",
            json: ["type": "SurveyResponse", "participantId": appToken,
                   "metadata": ["activityId": "NewSurvey", "version": "1", "activityRunId": text], "data": data])
        #expect(status == .ok, "\(body)")
        return try await processing.latest(h)
    }

    func seedDesign(_ h: ResponseHarness) async throws {
        try await h.studyEvent(Self.study)
        try await processing.seedNewSurvey(h)
    }

    func statuses(_ h: ResponseHarness, _ ids: [Int64]) async throws -> [Int64: (String, String?)] {
        var found: [Int64: (String, String?)] = [:]
        for try await (id, status, error) in try await h.postgres.query(
            "SELECT id, status, error_message FROM responses WHERE id = ANY(\(ids))", logger: Logger(label: "test")
        ).decode((Int64, String, String?).self) { found[id] = (status, error) }
        return found
    }

    /// The schema and table names of one of the study's lists.
    func table(_ h: ResponseHarness, _ list: String) async throws -> String {
        var location: (String, String)?
        for try await row in try await h.postgres.query(
            """
            SELECT s.schema_name, l.sql_name FROM response_lists l JOIN study_schemas s ON s.study_key = l.study_key
            WHERE l.study_key = \(Self.study) AND lower(l.name) = lower(\(list))
            """, logger: Logger(label: "test")
        ).decode((String, String).self) { location = row }
        let (schema, name) = try #require(location)
        return "\(SQLName.quoted(schema)).\(SQLName.quoted(name))"
    }

    /// (participant of the response, participant of the row its timing rows point at, the
    /// marked text of that row, timing rows, distinct rows they point at) for each response.
    func placement(_ h: ResponseHarness, _ ids: [Int64]) async throws -> [Int64: (Int64, Int64, String, Int, Int)] {
        let top = try await table(h, "NewSurvey")
        let sql = """
            SELECT r.id, p.number, min(t."ParticipantId"), min(t."ShortTextField"), count(*)::int,
                   count(DISTINCT m.top_key)::int
            FROM responses r JOIN participants p ON p.id = r.participant_id
                 JOIN response_metadata m ON m.response_id = r.id JOIN \(top) t ON t."Key" = m.top_key
            WHERE r.id = ANY($1) GROUP BY r.id, p.number
            """
        var bindings = PostgresBindings()
        bindings.append(ids)
        var found: [Int64: (Int64, Int64, String, Int, Int)] = [:]
        for try await (id, participant, rowParticipant, text, timings, tops) in try await h.postgres.query(
            PostgresQuery(unsafeSQL: sql, binds: bindings), logger: Logger(label: "test")
        ).decode((Int64, Int64, Int64, String, Int, Int).self) { found[id] = (participant, rowParticipant, text, timings, tops) }
        return found
    }

    func count(_ h: ResponseHarness, _ sql: String) async throws -> Int { try await processing.count(h, sql) }

    /// Every one of `ids` processed, into one row of its own, and the table holding no other.
    func expectEachProcessedOnce(_ h: ResponseHarness, _ ids: [Int64]) async throws {
        let settled = try await statuses(h, ids)
        try #require(settled.count == ids.count)
        #expect(settled.values.allSatisfy { $0.0 == "processed" })
        #expect(try await count(h, "SELECT count(*)::int FROM \(try await table(h, "NewSurvey"))") == ids.count)
        let placed = try await placement(h, ids)
        try #require(placed.count == ids.count)
        #expect(placed.values.allSatisfy { $0.4 == 1 })
    }

    @Test(.needsCluster) func aBatchIsStoredInOneRoundEachRowWithItsOwnResponseAndParticipant() async throws {
        try await ResponseHarness.run(overrides: ["processing.enabled": "false"]) { h in
            try await seedDesign(h)
            var submitted: [(id: Int64, text: String)] = []
            for participant in 0..<3 {
                let token = try await enroll(h)
                for run in 0..<4 {
                    let text = "p\(participant)-r\(run)"
                    submitted.append((try await submit(h, appToken: token, text: text), text))
                }
            }
            let processor = processing.processor(h)
            #expect(try await processor.round() == 12)
            let ids = submitted.map(\.id)
            let settled = try await statuses(h, ids)
            try #require(settled.count == 12)
            #expect(settled.values.allSatisfy { $0.0 == "processed" && $0.1 == nil })
            #expect(try await count(h, "SELECT count(*)::int FROM \(try await table(h, "NewSurvey"))") == 12)
            // Every response's timing rows point at one row: its own, by its mark, of its participant.
            let placed = try await placement(h, ids)
            try #require(placed.count == 12)
            for (id, text) in submitted {
                let (participant, rowParticipant, rowText, timings, tops) = try #require(placed[id])
                #expect(rowParticipant == participant)
                #expect(rowText == text)
                #expect(timings > 0)
                #expect(tops == 1)
            }
            // Each choice row belongs to a top row of the same participant.
            let choices = try await table(h, "NewSurveyTextChoiceField")
            let top = try await table(h, "NewSurvey")
            #expect(try await count(h, "SELECT count(*)::int FROM \(choices)") > 0)
            #expect(
                try await count(
                    h, "SELECT count(*)::int FROM \(choices) c JOIN \(top) t ON t.\"Key\" = c.\"NewSurveyId\" WHERE c.\"ParticipantId\" <> t.\"ParticipantId\"")
                    == 0)
            #expect(try await processor.round() == 0)
        }
    }

    @Test(.needsCluster) func aResponseTheRulesRefuseLeavesNothingAndItsNeighboursAreStored() async throws {
        try await ResponseHarness.run(overrides: ["processing.enabled": "false"]) { h in
            try await seedDesign(h)
            let token = try await enroll(h)
            var ids: [Int64] = []
            for run in 0..<5 { ids.append(try await submit(h, appToken: token, text: "run \(run)", scale: run == 2 ? "high" : nil)) }
            #expect(try await processing.processor(h).round() == 5)
            let settled = try await statuses(h, ids)
            try #require(settled.count == 5)
            #expect(settled[ids[2]]?.0 == "error")
            #expect(
                settled[ids[2]]?.1
                    == "Problem storing data in list 'NewSurvey' in container '\(Self.study)'.\nValue type for field 'ScaleField' expected to be Integer or Float but got class java.lang.String")
            for id in ids where id != ids[2] { #expect(settled[id]?.0 == "processed") }
            #expect(try await count(h, "SELECT count(*)::int FROM \(try await table(h, "NewSurvey"))") == 4)
            #expect(try await count(h, "SELECT count(*)::int FROM response_metadata WHERE response_id = \(ids[2])") == 0)
            #expect(try await placement(h, ids).count == 4)
        }
    }

    @Test(.needsCluster) func aValueOnlyPostgreSQLRefusesFailsOnlyItsResponse() async throws {
        try await ResponseHarness.run(overrides: ["processing.enabled": "false"]) { h in
            try await seedDesign(h)
            let token = try await enroll(h)
            var ids: [Int64] = []
            // ShortTextField is varchar(250): the rules pass a longer text, the column does not.
            for run in 0..<5 {
                let text = run == 1 ? String(repeating: "x", count: 300) : "run \(run)"
                ids.append(try await submit(h, appToken: token, text: text))
            }
            #expect(try await processing.processor(h).round() == 5)
            let settled = try await statuses(h, ids)
            try #require(settled.count == 5)
            #expect(settled[ids[1]]?.0 == "error")
            #expect(settled[ids[1]]?.1 == "value too long for type character varying(250) (SQLSTATE 22001)")
            for id in ids where id != ids[1] { #expect(settled[id]?.0 == "processed") }
            #expect(try await count(h, "SELECT count(*)::int FROM \(try await table(h, "NewSurvey"))") == 4)
            #expect(try await count(h, "SELECT count(*)::int FROM response_metadata WHERE response_id = \(ids[1])") == 0)
            let placed = try await placement(h, ids)
            try #require(placed.count == 4)
            #expect(placed.values.allSatisfy { $0.4 == 1 })
        }
    }

    @Test(.needsCluster) func twoReplicasDrainingOneBacklogStoreEachResponseOnce() async throws {
        try await ResponseHarness.run(overrides: ["processing.enabled": "false"]) { h in
            try await seedDesign(h)
            let token = try await enroll(h)
            var ids: [Int64] = []
            for run in 0..<30 { ids.append(try await submit(h, appToken: token, text: "run \(run)")) }
            // Two processors, as two replicas have, each taking one response at a time so their
            // claims interleave.
            let replicas = [processing.processor(h), processing.processor(h)]
            let taken = try await withThrowingTaskGroup(of: Int.self) { group in
                for replica in replicas {
                    group.addTask {
                        var taken = 0
                        while try await replica.processNext() { taken += 1 }
                        return taken
                    }
                }
                return try await group.reduce([]) { $0 + [$1] }
            }
            #expect(taken.reduce(0, +) == 30)
            try await expectEachProcessedOnce(h, ids)
        }
    }

    @Test(.needsCluster) func severalStoresAtOnceStoreEachResponseOnce() async throws {
        try await ResponseHarness.run(overrides: ["processing.enabled": "false"]) { h in
            try await seedDesign(h)
            let token = try await enroll(h)
            var ids: [Int64] = []
            for run in 0..<250 { ids.append(try await submit(h, appToken: token, text: "run \(run)")) }
            // Three pipelines claiming batches of 100 from one backlog of 250 at the same moment.
            #expect(try await processing.processor(h, storesInFlight: 3).round() == 250)
            try await expectEachProcessedOnce(h, ids)
        }
    }

    @Test(.needsCluster) func studiesTakeTurnsWithinABatch() async throws {
        try await ResponseHarness.run(overrides: ["processing.enabled": "false"]) { h in
            try await seedDesign(h)
            let busy = try await enroll(h)
            var backlog: [Int64] = []
            for run in 0..<10 { backlog.append(try await submit(h, appToken: busy, text: "busy \(run)")) }
            try await h.studyEvent("QUIETSTUDY")
            try await processing.seedNewSurvey(h, study: "QUIETSTUDY")
            let (_, enrolled, _) = try await h.call("mobileappstudy-enroll.api", json: ["studyId": "QUIETSTUDY", "allowDataSharing": "true"])
            let quiet = try await submit(h, appToken: try #require(enrolled["data"]?["appToken"]?.text), text: "quiet")
            try #require(backlog.allSatisfy { $0 < quiet })
            // A batch of three: the busy study's two oldest and the quiet study's one, not the
            // busy study's three oldest.
            let claimed = try await processing.processor(h).claim(limit: 3, lease: .seconds(45))
            #expect(Set(claimed.map(\.id)) == [backlog[0], backlog[1], quiet])
        }
    }

    @Test func aBatchIsCutIntoSlicesOfBoundedSize() {
        func response(_ id: Int64, bytes: Int) -> ResponseProcessor.Claimed {
            .init(id: id, studyKey: "S", studyId: "S", activityId: "a", version: "1", attempts: 1, storedBytes: bytes)
        }
        let limit = ResponseProcessor.maxSliceBytes
        let batch = [
            response(1, bytes: limit / 2), response(2, bytes: limit / 2), response(3, bytes: 1),
            response(4, bytes: limit * 3), response(5, bytes: 10),
        ]
        let slices = ResponseProcessor.slices(of: batch).map { $0.map(\.id) }
        // Two halves fill a slice; one larger than the bound goes alone.
        #expect(slices == [[1, 2], [3], [4], [5]])
        #expect(ResponseProcessor.slices(of: []).isEmpty)
    }
}
