import FHIR
import Foundation
import JSONText
import StudyModels
import Testing

/// A forwarded response as a FHIR transaction: conditional creates a FHIR server can match, no
/// ids of ours, and the response's subject the Patient of the same Bundle.
@Suite struct FHIRTransactionTests {
    static let enrolled = StudyResources.Enrollment(
        participantId: 42, studyId: "FHIR_STUDY", withdrawn: false, enrolledAt: Date(timeIntervalSince1970: 1_780_000_000), withdrawnAt: nil)

    static func transaction(_ stored: StoredResponse, questionnaire: JSONValue?) -> JSONValue {
        FHIRTransaction.forwarding(
            response: QuestionnaireResponseMapping.questionnaireResponse(stored, naming: FHIRSamples.naming), of: stored,
            patient: StudyResources.patient(enrolled, naming: FHIRSamples.naming), questionnaire: questionnaire, naming: FHIRSamples.naming)
    }

    @Test func eachResourceIsAConditionalCreateAndTheResponseNamesTheBundlesPatient() throws {
        let design = try QuestionnaireResponseMappingTests.design()
        let stored = FHIRSamples.response(QuestionnaireResponseMappingTests.results(), design: design)
        let bundle = Self.transaction(stored, questionnaire: FHIRSamples.questionnaire(design.steps).resource)
        #expect(bundle["resourceType"]?.string == "Bundle")
        #expect(bundle["type"]?.string == "transaction")
        let entries = bundle["entry"]?.array ?? []
        #expect(entries.count == 3)
        #expect(entries.map { $0["request"]?["url"]?.string ?? "" } == ["Questionnaire", "Patient", "QuestionnaireResponse"])
        #expect(entries.allSatisfy { $0["request"]?["method"]?.string == "POST" })
        #expect(entries.allSatisfy { $0["resource"]?["id"] == nil && $0["resource"]?["meta"] == nil }, "the server gives ids")
        #expect(entries.allSatisfy { $0["fullUrl"]?.string?.hasPrefix("urn:uuid:") == true })
        let base = FHIRSamples.naming.base
        #expect(entries[0]["request"]?["ifNoneExist"]?.string == "url=\(base)/Questionnaire/FHIR.STUDY/survey&version=1.0")
        #expect(entries[1]["request"]?["ifNoneExist"]?.string == "identifier=\(base)/sid/FHIR.STUDY/participant|42")
        #expect(entries[2]["request"]?["ifNoneExist"]?.string == "identifier=\(base)/sid/FHIR.STUDY/run|42/survey/3")
        let patient = try #require(entries[1]["fullUrl"]?.string)
        #expect(entries[2]["resource"]?["subject"]?["reference"]?.string == patient)
        #expect(entries[2]["resource"]?["source"]?["reference"]?.string == patient)
        #expect(entries[2]["resource"]?["questionnaire"]?.string == "\(base)/Questionnaire/FHIR.STUDY/survey|1.0")
    }

    /// A version the server has is left out; a response of no run is known by its response id;
    /// a value a query would misread (`&`, `=`, `#`, a space) is percent-encoded.
    @Test func withoutItsQuestionnaireOrARunTheResponseIsStillFoundAgain() throws {
        var stored = FHIRSamples.response(QuestionnaireResponseMappingTests.results(), design: nil, activityId: "a&b=c #d")
        stored.runId = nil
        let entries = Self.transaction(stored, questionnaire: nil)["entry"]?.array ?? []
        #expect(entries.count == 2)
        let response = try #require(entries.last)
        let base = FHIRSamples.naming.base
        #expect(response["resource"]?["identifier"]?["system"]?.string == "\(base)/sid/FHIR.STUDY/response")
        #expect(response["resource"]?["identifier"]?["value"]?.string == "7")
        #expect(response["request"]?["ifNoneExist"]?.string == "identifier=\(base)/sid/FHIR.STUDY/response|7")
        #expect(FHIRTransaction.queryValue("a&b=c #d|é") == "a%26b%3Dc%20%23d|%C3%A9")
    }
}
