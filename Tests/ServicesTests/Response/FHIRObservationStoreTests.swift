import FHIR
import Foundation
import JSONText
import Logging
import PostgresNIO
import ResponseCore
import StudyModels
import Testing
import TestSupport

/// The responses Observations come from, read from PostgreSQL: the study's task activities (as
/// their designs say), a page of their responses, and the count of their tasks taken where they
/// are stored, which must agree with the Observations the mapping makes of every page, for every
/// shape a response's data can have, and stay within the study.
@Suite(.needsCluster) struct FHIRObservationStoreTests {
    @Test func countsPagesAndMappingAgree() async throws {
        try await ResponseHarness.run { h in
            let logger = Logger(label: "test")
            #expect(try await h.studyEvent("TASKS") == .ok)
            #expect(try await h.studyEvent("OTHER") == .ok)
            let designs: [(String, String, String)] = [
                ("TASKS", "kicks", #"{"activity": {"type": "task", "steps": [{"type": "task", "resultType": "fetalKickCounter", "key": "counter"}]}}"#),
                ("TASKS", "hanoi", #"{"activity": {"type": "task", "steps": [{"type": "task", "resultType": "towerOfHanoi", "key": "towers"}]}}"#),
                ("TASKS", "survey", #"{"activity": {"type": "questionnaire", "steps": [{"type": "question", "resultType": "scale", "key": "mood"}]}}"#),
                ("OTHER", "kicks", #"{"activity": {"type": "task", "steps": [{"type": "task", "resultType": "fetalKickCounter", "key": "counter"}]}}"#),
            ]
            for (study, activity, design) in designs {
                try await h.sql("INSERT INTO activity_designs (study_key, activity_id, version, design) VALUES (\(study), \(activity), '1.0', \(design)::jsonb)")
            }
            // The service's own keys (what responses refer to) and the numbers each study gave
            // them (a Patient's id).
            var participants: [Int64] = []
            var numbers: [Int64] = []
            for study in ["TASKS", "TASKS", "OTHER"] {
                let rows = try await h.postgres.query(
                    "INSERT INTO participants (study_key, status, allow_data_sharing) VALUES (\(study), 'enrolled', 'true') RETURNING id, number",
                    logger: logger)
                for try await (id, number) in rows.decode((Int64, Int64).self) {
                    participants.append(id)
                    numbers.append(number)
                }
            }
            #expect(numbers == [1, 2, 1])
            let kick = #"{"resultType": "fetalKickCounter", "key": "counter", "value": [{"key": "count", "value": 12}, {"key": "duration", "value": 60}]}"#
            let responses: [(Int, String, String)] = [
                (0, "kicks", #"{"results": [\#(kick)]}"#),
                (0, "kicks", #"{"results": [\#(kick), \#(kick)]}"#),  // two tasks in one response
                (1, "kicks", #"{"results": [{"resultType": "fetalKickCounter", "key": "c", "skipped": true, "value": []}]}"#),
                (1, "kicks", #"{"results": [{"resultType": "fetalKickCounter", "key": "c", "skipped": "no", "value": []}]}"#),
                (1, "kicks", #"{"results": [{"resultType": "fetalKickCounter", "key": "c", "value": "12"}]}"#),
                (1, "kicks", #"{"results": {"resultType": "fetalKickCounter", "key": "c", "value": []}}"#),  // not a list
                (1, "kicks", #"{"results": [7, "x", null, {"resultType": 5, "value": []}]}"#),
                (0, "hanoi", #"{"results": [{"resultType": "towerOfHanoi", "key": "t", "skipped": false, "value": [{"key": "numberOfMoves", "value": 9}]}]}"#),
                (1, "survey", #"{"results": [{"resultType": "scale", "key": "mood", "value": 3}]}"#),
                (2, "kicks", #"{"results": [\#(kick)]}"#),  // another study's
            ]
            for (index, (participant, activity, data)) in responses.enumerated() {
                let study = participant == 2 ? "OTHER" : "TASKS"
                try await h.sql(
                    """
                    INSERT INTO responses (participant_id, study_key, activity_id, activity_version, metadata, data, fingerprint)
                    VALUES (\(participants[participant]), \(study), \(activity), '1.0', '{}', \(data)::jsonb, \(String(index)))
                    """)
            }
            let store = FHIRStore(client: h.postgres, logger: logger)
            let tasks = try await store.taskActivities(studyKey: "TASKS")
            #expect(tasks == ["kicks": [.fetalKickCounter], "hanoi": [.towerOfHanoi]])

            let naming = FHIRNaming(base: "https://studies.example.org/fhir/r4")
            func search(_ query: [(String, String)]) throws -> FHIRSearch {
                try FHIRSearch.parse(type: "Observation", query: query.map { (name: $0.0, value: $0.1) }, studyId: "TASKS", naming: naming)
            }
            /// Every Observation a search finds, a page of `count` responses at a time.
            func observations(_ query: [(String, String)], count: Int) async throws -> [JSONValue] {
                var search = try search(query + [("_count", String(count))])
                var found: [JSONValue] = []
                for _ in 0..<20 {
                    let page = try await store.taskResponses(studyKey: "TASKS", studyId: "TASKS", search: search)
                    #expect(page.resources.count <= count)
                    found += page.resources.flatMap { TaskObservations.observations($0, naming: naming) }
                        .filter { observation in search.code.map { observation["code"]?["coding"]?.array?.first?["code"]?.string == $0.rawValue } ?? true }
                    guard let next = page.nextAfter else { return found }
                    search.after = next
                }
                Issue.record("more pages than responses")
                return found
            }
            // Tasks: one in the first response, two in the second, one not skipped ("no" is not
            // true), one in the Tower of Hanoi response; none in the skipped one, the one whose
            // value is not a list, the one whose results are not a list, the junk, the survey.
            let searches: [(String, [(String, String)], Int)] = [
                ("all", [], 5),
                ("kicks", [("code", "fetalKickCounter")], 4),
                ("hanoi", [("code", "\(naming.activeTaskSystem)|towerOfHanoi")], 1),
                ("spatial span", [("code", "spatialSpanMemory")], 0),
                ("first participant", [("subject", "Patient/\(numbers[0])")], 4),
                ("second participant", [("patient", "Patient/\(numbers[1])")], 1),
                ("a number no participant of the study has", [("subject", "Patient/3")], 0),
                ("final", [("status", "final")], 5),
                ("amended", [("status", "amended")], 0),
                ("changed since now", [("_lastUpdated", "gt" + Date().addingTimeInterval(1).formatted(.iso8601))], 0),
                ("changed before now", [("_lastUpdated", "lt" + Date().addingTimeInterval(1).formatted(.iso8601))], 5),
            ]
            #expect(searches.count == 11)
            for (name, query, expected) in searches {
                let counted = try await store.countTaskObservations(studyKey: "TASKS", search: try search(query))
                #expect(counted == expected, "\(name): counted")
                for pageSize in [1, 2, 50] {
                    let paged = try await observations(query, count: pageSize)
                    #expect(paged.count == expected, "\(name): \(pageSize) a page")
                    #expect(Set(paged.compactMap { $0["id"]?.string }).count == paged.count, "\(name): each once")
                }
            }
            // The response with two tasks is two Observations, told apart by their ordinal.
            let ids = try await observations([("subject", "Patient/\(numbers[0])")], count: 50).compactMap { $0["id"]?.string }
            #expect(ids.filter { $0.hasSuffix("-2") }.count == 1, "\(ids)")
        }
    }
}
