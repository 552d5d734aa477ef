import FHIR
import Foundation
import JSONText
import ServiceKit
import StudyModels
import Testing
import TestSupport

/// Every kind of resource the mapping makes, checked by a maintained FHIR model library
/// (fhir.resources, its R4B models) and the specification's FHIRPath invariants (fhirpathpy):
/// `scripts/fhir-validate.py`.
@Suite(.needsToolsPython) struct FHIRValidationTests {
    static func resources() throws -> [JSONValue] {
        let naming = FHIRSamples.naming
        var resources: [JSONValue] = []
        // Every activity of the example study, and the tests' designs (every step type, forms,
        // tasks, branching, choices with free text).
        for (activityId, design) in try FHIRSamples.exampleDesigns() {
            resources.append(QuestionnaireMapping.questionnaire(
                QuestionnaireVersion(studyId: "EXAMPLE", activityId: activityId, version: "1.0", design: design,
                    publishedAt: Date(timeIntervalSince1970: 1_780_000_000)),
                naming: naming).resource)
        }
        let design = try QuestionnaireResponseMappingTests.design()
        resources.append(FHIRSamples.questionnaire(design.steps).resource)
        var retired = QuestionnaireVersion(studyId: "FHIR_STUDY", activityId: "old", version: "2", design: design)
        retired.retired = true
        resources.append(QuestionnaireMapping.questionnaire(retired, naming: naming).resource)
        let response = QuestionnaireResponseMapping.questionnaireResponse(
            FHIRSamples.response(QuestionnaireResponseMappingTests.results(), design: design), naming: naming).resource
        resources.append(response)
        let enrolled = StudyResources.Enrollment(
            participantId: 42, studyId: "FHIR_STUDY", withdrawn: false, enrolledAt: Date(timeIntervalSince1970: 1_780_000_000), withdrawnAt: nil)
        let withdrawn = StudyResources.Enrollment(
            participantId: 43, studyId: "FHIR_STUDY", withdrawn: true, enrolledAt: Date(timeIntervalSince1970: 1_780_000_000),
            withdrawnAt: Date(timeIntervalSince1970: 1_780_100_000))
        for enrollment in [enrolled, withdrawn] {
            resources.append(StudyResources.patient(enrollment, naming: naming))
            resources.append(StudyResources.researchSubject(enrollment, naming: naming))
        }
        for status in [StudyStatus.preLaunch, .upcoming, .testing, .active, .paused, .deactivated] {
            resources.append(StudyResources.researchStudy(
                StudyResources.Study(studyId: "FHIR_STUDY", name: "A study", status: status, versions: ["1.0", "1.1"], updatedAt: Date()),
                naming: naming))
        }
        // Consents in each state, each sharing choice, with a PDF and without; the PDF as a Binary.
        resources += ConsentMappingTests.samples().map { ConsentResources.consent($0, naming: naming) }
        resources.append(ConsentResources.binary(recordId: 7, pdf: Array("%PDF-1.4 signed".utf8)))
        // Each active task's results as an Observation.
        resources += try TaskObservationTests.samples()
        resources.append(OperationOutcome.make(.notFound, "Patient/9 is not a participant of this study"))
        resources.append(SearchBundle.make(
            total: 2, selfURL: "\(naming.base)/Patient?_count=1", nextURL: "\(naming.base)/Patient?_count=1&_cursor=abc",
            entries: [
                SearchBundle.Entry(resource: response, fullUrl: "\(naming.base)/QuestionnaireResponse/7", mode: "match"),
                SearchBundle.Entry(resource: StudyResources.patient(enrolled, naming: naming), fullUrl: "\(naming.base)/Patient/42", mode: "include"),
            ]))
        // A forwarded response's transaction, with its questionnaire and without.
        let stored = FHIRSamples.response(QuestionnaireResponseMappingTests.results(), design: design)
        for questionnaire in [FHIRSamples.questionnaire(design.steps).resource, nil] {
            resources.append(FHIRTransaction.forwarding(
                response: QuestionnaireResponseMapping.questionnaireResponse(stored, naming: naming), of: stored,
                patient: StudyResources.patient(enrolled, naming: naming), questionnaire: questionnaire, naming: naming))
        }
        return resources
    }

    @Test func everyResourceTheMappingMakesIsValidR4() async throws {
        let resources = try Self.resources()
        #expect(resources.count == 34)
        let lines = resources.map { $0.serialized() }.joined(separator: "\n") + "\n"
        let output = try await ChildProcess.runInTask(
            TestEnvironment.toolsPython, [ServiceProcess.packageRoot.appendingPathComponent("scripts/fhir-validate.py").path, "-"],
            input: Data(lines.utf8))
        let summary = String(decoding: output, as: UTF8.self)
        print(summary)
        #expect(summary.contains("checked 34 resources"), "\(summary)")
        #expect(summary.contains("3 Observation"), "\(summary)")
        #expect(summary.contains("4 Consent"), "\(summary)")
        #expect(summary.contains(", 0 failures"), "\(summary)")
    }

    /// The validator itself fails what is not valid: a resource that breaks an invariant, one
    /// the model refuses, and an empty element.
    @Test func theValidatorRefusesWhatIsInvalid() async throws {
        let broken = [
            #"{"resourceType":"Questionnaire","status":"active","item":[{"linkId":"a","type":"display","required":true}]}"#,
            #"{"resourceType":"QuestionnaireResponse","status":"finished"}"#,
            #"{"resourceType":"Patient","identifier":[]}"#,
            #"{"resourceType":"Patient","colour":"red"}"#,
            #"{"resourceType":"Consent","status":"active","scope":{"text":"research"},"category":[{"text":"consent"}]}"#,
        ].joined(separator: "\n") + "\n"
        await #expect(throws: ChildProcess.Failure.self) {
            try await ChildProcess.runInTask(
                TestEnvironment.toolsPython, [ServiceProcess.packageRoot.appendingPathComponent("scripts/fhir-validate.py").path, "-"],
                input: Data(broken.utf8))
        }
        do {
            try await ChildProcess.runInTask(
                TestEnvironment.toolsPython, [ServiceProcess.packageRoot.appendingPathComponent("scripts/fhir-validate.py").path, "-"],
                input: Data(broken.utf8))
        } catch {
            let text = "\(error)"
            #expect(text.contains("que-6 fails"), "\(text)")
            #expect(text.contains("-:2: QuestionnaireResponse.status is 'finished', not a code"), "\(text)")
            #expect(text.contains("-:3: empty or null element at $.identifier"), "\(text)")
            #expect(text.contains("-:4: fhir.resources R4B"), "\(text)")
            #expect(text.contains("-:5: Consent ppc-1 fails"), "\(text)")
        }
    }
}
