import FHIR
import Foundation
import JSONText
import StudyModels
import Testing

/// A consent record as an R4 `Consent`: its state as the status, the sharing choice as a nested
/// provision, the PDF as the source attachment, and what de-identification leaves of it.
@Suite struct ConsentMappingTests {
    static let signed = Date(timeIntervalSince1970: 1_780_000_000)

    /// In force with sharing, ended by a later consent, pending, and a study that does not ask.
    static func samples() -> [ConsentResources.Consent] {
        [
            .init(
                recordId: 7, participantId: 42, studyId: "FHIR_STUDY", version: "1.0", state: .inForce, sharing: "true", signedAt: signed,
                endedAt: nil, pdfBytes: 15, hasPDF: true, completed: true),
            .init(
                recordId: 8, participantId: 42, studyId: "FHIR_STUDY", version: "0.9", state: .ended, sharing: "false", signedAt: signed,
                endedAt: signed.addingTimeInterval(86_400), pdfBytes: 15, hasPDF: true, completed: true),
            .init(
                recordId: 9, participantId: 43, studyId: "FHIR_STUDY", version: "1.0", state: .pending, sharing: "", signedAt: signed,
                endedAt: nil, pdfBytes: nil, hasPDF: false, completed: false),
            .init(
                recordId: 10, participantId: 44, studyId: "FHIR_STUDY", version: "v 2/β", state: .inForce, sharing: "NA",
                signedAt: signed, endedAt: nil, pdfBytes: 15, hasPDF: true, completed: true),
        ]
    }

    @Test func eachRecordIsAConsentOfItsParticipant() throws {
        let naming = FHIRSamples.naming
        let consents = Self.samples().map { ConsentResources.consent($0, naming: naming) }
        #expect(consents.count == 4)
        #expect(consents.map { $0["status"]?.string } == ["active", "inactive", "proposed", "active"])
        #expect(consents.map { $0["meta"]?["versionId"]?.string } == ["1", "2", "1", "1"])
        #expect(consents[0]["patient"]?["reference"]?.string == "Patient/42")
        #expect(consents[0]["scope"]?["coding"]?.array?.first?["code"]?.string == "research")
        #expect(consents[0]["dateTime"]?.string == FHIRJSON.instant(Self.signed))
        // The PDF is read where the attachment says; a pending record without one has none.
        #expect(consents[0]["sourceAttachment"]?["url"]?.string == "\(naming.base)/Binary/consent-7")
        #expect(consents[0]["sourceAttachment"]?["contentType"]?.string == "application/pdf")
        #expect(consents[0]["sourceAttachment"]?["size"]?.number == 15)
        #expect(consents[2]["sourceAttachment"] == nil)
        // The policy is the study's consent at the version signed, its label percent-encoded.
        #expect(consents[0]["policy"]?.array?.first?["uri"]?.string == "\(naming.base)/ResearchStudy/FHIR.STUDY/consent/1.0")
        #expect(consents[3]["policy"]?.array?.first?["uri"]?.string == "\(naming.base)/ResearchStudy/FHIR.STUDY/consent/v%202%2F%CE%B2")
        // Sharing: permitted, denied, or (not asked, never answered) not said.
        let nested = consents.map { $0["provision"]?["provision"]?.array ?? [] }
        #expect(nested.map(\.count) == [1, 1, 0, 0])
        #expect(nested[0].first?["type"]?.string == "permit")
        #expect(nested[1].first?["type"]?.string == "deny")
        #expect(nested[0].first?["code"]?.array?.first?["coding"]?.array?.first?["system"]?.string == naming.dataSharingSystem)
        // An ended consent's provision ends when it did.
        #expect(consents[1]["provision"]?["period"]?["end"]?.string == FHIRJSON.instant(Self.signed.addingTimeInterval(86_400)))
        #expect(consents[1]["meta"]?["lastUpdated"]?.string == FHIRJSON.instant(Self.signed.addingTimeInterval(86_400)))
        #expect(consents[0]["provision"]?["period"]?["end"] == nil)
    }

    @Test func statusesSearchTheStatesTheyStandFor() {
        #expect(ConsentRecordState.allCases.count == 3)
        for state in ConsentRecordState.allCases {
            #expect(ConsentResources.state(status: ConsentResources.status(state)) == state)
        }
        #expect(ConsentResources.state(status: "rejected") == nil)
        #expect(ConsentResources.state(status: "ACTIVE") == nil)
    }

    @Test func aDocumentIdNamesOnlyAConsentRecord() {
        #expect(FHIRId.consentRecord(fromDocument: FHIRId.consentDocument(123)) == 123)
        for id in ["consent-", "consent-12a", "consent--1", "Consent-1", "consent-1234567890123456789", "consent-١٢", "7"] {
            #expect(FHIRId.consentRecord(fromDocument: id) == nil, "\(id)")
        }
    }

    /// De-identified, a consent keeps its status, scope and sharing; loses the signed PDF (the
    /// participant's name and signature) and moves its dates with the participant's.
    @Test func deidentifiedTheSignedDocumentGoesAndDatesMove() throws {
        let deidentification = FHIRDeidentification(secret: Data(repeating: 7, count: 32))
        let consent = ConsentResources.consent(Self.samples()[1], naming: FHIRSamples.naming)
        let result = deidentification.apply(consent, studyId: "FHIR_STUDY", participantId: 42)
        let days = deidentification.shiftDays(studyId: "FHIR_STUDY", participantId: 42)
        #expect(result["sourceAttachment"] == nil)
        #expect(result["patient"]?["reference"]?.string == "Patient/\(deidentification.pseudonym(studyId: "FHIR_STUDY", participantId: 42))")
        #expect(result["dateTime"]?.string == FHIRDeidentification.shift(FHIRJSON.instant(Self.signed), days: days))
        #expect(result["provision"]?["period"]?["start"]?.string == FHIRDeidentification.shift(FHIRJSON.instant(Self.signed), days: days))
        #expect(result["status"]?.string == "inactive")
        #expect(result["provision"]?["provision"]?.array?.first?["type"]?.string == "deny")
        #expect(!result.serialized().contains("Binary/consent"))
    }
}
