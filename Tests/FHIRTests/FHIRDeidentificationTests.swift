import FHIR
import Foundation
import JSONText
import Testing

/// De-identification as a de-identified client's export applies it: a stable pseudonym, one
/// secret shift per participant, identifiers and free text gone, what is coded or numeric kept.
@Suite struct FHIRDeidentificationTests {
    static let deidentification = FHIRDeidentification(secret: Data(repeating: 7, count: 32))

    @Test func pseudonymsAndShiftsAreStablePerParticipantAndSecret() {
        let d = Self.deidentification
        #expect(d.pseudonym(studyId: "S", participantId: 1) == d.pseudonym(studyId: "S", participantId: 1))
        #expect(d.pseudonym(studyId: "S", participantId: 1) != d.pseudonym(studyId: "S", participantId: 2))
        #expect(d.pseudonym(studyId: "S", participantId: 1) != d.pseudonym(studyId: "T", participantId: 1))
        #expect(FHIRId.isValid(d.pseudonym(studyId: "S", participantId: 1)) && d.pseudonym(studyId: "S", participantId: 1).count == 32)
        let other = FHIRDeidentification(secret: Data(repeating: 8, count: 32))
        #expect(other.pseudonym(studyId: "S", participantId: 1) != d.pseudonym(studyId: "S", participantId: 1), "another secret")
        let shifts = (1...2_000).map { d.shiftDays(studyId: "S", participantId: Int64($0)) }
        #expect(shifts.count == 2_000)
        #expect(shifts.allSatisfy { $0 != 0 && abs($0) <= FHIRDeidentification.maxShiftDays })
        #expect(Set(shifts).count > 150, "spread over the range")
        #expect(shifts.contains { $0 < 0 } && shifts.contains { $0 > 0 })
    }

    @Test func datesMoveByWholeDaysKeepingTheirZoneAndPrecision() {
        #expect(FHIRDeidentification.shift("2026-03-01T08:30:00+01:00", days: 10) == "2026-03-11T08:30:00+01:00")
        #expect(FHIRDeidentification.shift("2024-02-28", days: 1) == "2024-02-29")
        #expect(FHIRDeidentification.shift("2026-01-05T00:00:00.250Z", days: -10) == "2025-12-26T00:00:00.250Z")
        #expect(FHIRDeidentification.shift("2026", days: 3) == nil, "a year cannot be moved by days")
        #expect(FHIRDeidentification.shift("2026-03", days: 3) == nil)
        #expect(FHIRDeidentification.shift("not-a-date", days: 3) == nil)
        #expect(FHIRDeidentification.shift("0001-01-01", days: -5) == nil, "nothing before year 1")
    }

    @Test func aResponseKeepsItsCodedAnswersAndLosesWhatIdentifies() throws {
        let d = Self.deidentification
        let response = try JSONValue.parse(Array("""
            {"resourceType":"QuestionnaireResponse","id":"17","identifier":{"system":"s","value":"42/daily/1"},
             "status":"completed","subject":{"reference":"Patient/42"},"authored":"2026-03-01T08:30:00Z",
             "meta":{"lastUpdated":"2026-03-01T08:31:00Z"},
             "item":[{"linkId":"mood","text":"How are you?","answer":[{"valueCoding":{"code":"2"}}]},
                     {"linkId":"notes","text":"Anything else?","answer":[{"valueString":"Woke once, Dr Smith called"}]},
                     {"linkId":"slept","answer":[{"valueDate":"2026-02-28"}]},
                     {"linkId":"hours","answer":[{"valueDecimal":7.5}]}]}
            """.utf8), budget: .studyDocument)
        let out = d.apply(response, studyId: "S", participantId: 42)
        let text = out.serialized()
        let days = d.shiftDays(studyId: "S", participantId: 42)
        let pseudonym = d.pseudonym(studyId: "S", participantId: 42)
        #expect(out["id"]?.string == "17", "a response's number identifies no one")
        #expect(out["identifier"] == nil)
        #expect(!text.contains("Smith") && !text.contains("How are you"), "free text and question texts go")
        #expect(out["subject"]?["reference"]?.string == "Patient/\(pseudonym)")
        #expect(out["authored"]?.string == FHIRDeidentification.shift("2026-03-01T08:30:00Z", days: days))
        #expect(out["meta"]?["lastUpdated"]?.string == FHIRDeidentification.shift("2026-03-01T08:31:00Z", days: days))
        let items = out["item"]?.array ?? []
        #expect(items.count == 4)
        #expect(items[0]["answer"]?.array?.first?["valueCoding"]?["code"]?.string == "2")
        #expect(items[1]["answer"] == nil, "the text answer is gone, and FHIR has no empty arrays")
        #expect(items[2]["answer"]?.array?.first?["valueDate"]?.string == FHIRDeidentification.shift("2026-02-28", days: days))
        #expect(items[3]["answer"]?.array?.first?["valueDecimal"]?.number == 7.5)

        let patient = try JSONValue.parse(Array("""
            {"resourceType":"Patient","id":"42","identifier":[{"system":"s","value":"42"}],"active":true}
            """.utf8), budget: .studyDocument)
        let pseudonymous = d.apply(patient, studyId: "S", participantId: 42)
        #expect(pseudonymous["id"]?.string == pseudonym)
        #expect(pseudonymous["identifier"] == nil)
        #expect(pseudonymous["active"]?.bool == true)
    }
}
