import FHIR
import Foundation
import JSONText
import StudyModels
import Testing
import TestSupport

/// Active tasks' results as Observations, from the original LabKey server's own test responses
/// (`Tests/Fixtures/labkey`): one per task, its results as typed components, derived from the
/// response; what does not fit is left out, never guessed at.
@Suite struct TaskObservationTests {
    static func fixture(_ name: String) throws -> JSONValue {
        let url = Conformance.labkey.appendingPathComponent("SurveyMetadata/DYNAMICSCHEMASTUDY_\(name)_1.0--RESPONSE.json")
        return try JSONValue.parse(Array(try Data(contentsOf: url)), budget: .responseAnswers)
    }

    static func response(_ data: JSONValue, id: Int64 = 7) -> StoredResponse {
        StoredResponse(
            id: id, studyId: "FHIR_STUDY", participantId: 42, activityId: "kicks", version: "1.0", runId: "1", data: data,
            receivedAt: Date(timeIntervalSince1970: 1_780_000_100), design: nil)
    }

    /// The three tasks' responses as the LabKey server's tests hold them, one Observation each.
    static func samples() throws -> [JSONValue] {
        try ["FKC-74", "TOH-75", "SSM-76"].enumerated().flatMap { index, name in
            TaskObservations.observations(Self.response(try Self.fixture(name), id: Int64(index + 1)), naming: FHIRSamples.naming)
        }
    }

    @Test func eachTaskIsAnObservationOfItsResults() throws {
        let observations = try Self.samples()
        #expect(observations.count == 3)
        let system = FHIRSamples.naming.activeTaskSystem
        #expect(observations.map { $0["code"]?["coding"]?.array?.first?["code"]?.string } == ["fetalKickCounter", "towerOfHanoi", "spatialSpanMemory"])
        #expect(observations.allSatisfy { $0["code"]?["coding"]?.array?.first?["system"]?.string == system })
        #expect(observations.map { $0["id"]?.string } == ["1-1", "2-1", "3-1"])
        let kicks = observations[0]
        #expect(kicks["status"]?.string == "final")
        #expect(kicks["subject"]?["reference"]?.string == "Patient/42")
        #expect(kicks["derivedFrom"]?.array?.first?["reference"]?.string == "QuestionnaireResponse/1")
        #expect(kicks["effectivePeriod"]?["start"]?.string == "2016-09-06T15:54:21+00:00")
        #expect(kicks["effectivePeriod"]?["end"]?.string == "2016-09-06T15:54:22+00:00")
        #expect(kicks["issued"]?.string == FHIRJSON.instant(Date(timeIntervalSince1970: 1_780_000_100)))
        let components = kicks["component"]?.array ?? []
        #expect(components.count == 2)
        #expect(components[0]["code"]?["coding"]?.array?.first?["code"]?.string == "fetalKickCounter.duration")
        #expect(components[0]["valueQuantity"]?["value"]?.number == 200)
        #expect(components[0]["valueQuantity"]?["code"]?.string == "s")
        #expect(components[1]["valueInteger"]?.number == 33)
        #expect(components[1]["valueInteger"]?.serialized() == "33", "an integer is written without a fraction")
        let hanoi = observations[1]["component"]?.array ?? []
        #expect(hanoi.map { $0["valueBoolean"]?.bool } == [false, nil])
        #expect(hanoi.last?["valueInteger"]?.number == 341)
        #expect(observations[2]["component"]?.array?.count == 3)
    }

    @Test func whatDoesNotFitIsLeftOutAndSkippedTasksAreNone() throws {
        func task(_ type: String, _ inner: JSONValue, skipped: Bool = false) -> JSONValue {
            FHIRSamples.result(type, "task", inner, skipped: skipped)
        }
        let data = JSONValue.object(JSONObject(pairs: [
            ("endTime", .string("2026-03-01T08:05:00.000+0100")),
            ("results", .array([
                task("fetalKickCounter", .array([
                    FHIRSamples.result("numeric", "count", .number(JSONNumber(12.5))),
                    FHIRSamples.result("numeric", "duration", .string("long")),
                ])),
                task("towerOfHanoi", .array([FHIRSamples.result("boolean", "puzzleWasSolved", .bool(true))]), skipped: true),
                task("spatialSpanMemory", .string("not a list")),
                FHIRSamples.result("scale", "mood", .number(JSONNumber(3))),
                task("spatialSpanMemory", .array([
                    FHIRSamples.result("numeric", "score", .number(JSONNumber(3_000_000_000))),
                    FHIRSamples.result("numeric", "numberOfGames", .number(JSONNumber(4))),
                    FHIRSamples.result("numeric", "numberOfGames", .number(JSONNumber(5))),
                ])),
            ])),
        ]))
        let observations = TaskObservations.observations(Self.response(data), naming: FHIRSamples.naming)
        // The skipped task and the one whose value is not a list are no Observation.
        #expect(observations.count == 2)
        #expect(TaskObservations.taskResults(data).count == 2)
        // Nothing of the kick count fits: no components, and why.
        #expect(observations[0]["component"] == nil)
        #expect(observations[0]["dataAbsentReason"]?["coding"]?.array?.first?["code"]?.string == "error")
        // A score past FHIR's 32-bit integer is left out; a key given twice counts once, the first.
        let span = observations[1]["component"]?.array ?? []
        #expect(span.count == 1)
        #expect(span.first?["valueInteger"]?.number == 4)
        #expect(observations[1]["id"]?.string == "7-2")
    }

    @Test func idsNameAResponseAndAnOrdinal() {
        #expect(TaskObservations.parse(id: "12-3")! == (12, 3))
        for id in ["12", "12-", "-3", "12-0", "0-1", "12-3-4", "1a-1", "12-١", "1234567890123456789-1", "12-12345"] {
            #expect(TaskObservations.parse(id: id) == nil, "\(id)")
        }
    }

    /// De-identified, an Observation keeps its values and moves its times with the participant.
    @Test func deidentifiedTheValuesStayAndTimesMove() throws {
        let deidentification = FHIRDeidentification(secret: Data(repeating: 3, count: 32))
        let observation = try #require(try Self.samples().first)
        let result = deidentification.apply(observation, studyId: "FHIR_STUDY", participantId: 42)
        let days = deidentification.shiftDays(studyId: "FHIR_STUDY", participantId: 42)
        #expect(result["subject"]?["reference"]?.string == "Patient/\(deidentification.pseudonym(studyId: "FHIR_STUDY", participantId: 42))")
        #expect(result["issued"]?.string == FHIRDeidentification.shift(try #require(observation["issued"]?.string), days: days))
        #expect(result["effectivePeriod"]?["start"]?.string == FHIRDeidentification.shift("2016-09-06T15:54:21+00:00", days: days))
        #expect(result["component"] == observation["component"])
    }
}
