import FHIR
import Foundation
import JSONText
import StudyModels

/// A processed response as the FHIR transaction forwarding sends to a study's FHIR server
/// (docs/fhir.md, Forwarding): the resources the FHIR API serves of it, its participant's Patient,
/// and its Questionnaire version until that server has taken it once.
package struct FHIRForwarding: Sendable {
    /// Why a response cannot be put into a transaction now, as the admin API shows it.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    /// The body to send, and the questionnaire version in it, to record once the server took it.
    package struct Transaction: Sendable {
        package var body: [UInt8]
        package var questionnaire: (activityId: String, version: String)?
    }

    package let catalog: StudyCatalog
    package let resources: FHIRResources
    package let forwarding: ForwardingStore

    package init(catalog: StudyCatalog, resources: FHIRResources, forwarding: ForwardingStore) {
        self.catalog = catalog
        self.resources = resources
        self.forwarding = forwarding
    }

    /// The transaction of response `responseId` of the study, for the FHIR server at `target`.
    package func transaction(responseId: Int64, studyKey: String, target: URL) async throws -> Transaction {
        guard let study = try await catalog.study(studyKey) else { throw Unavailable(description: "The study is no longer known here.") }
        let store = resources.store
        guard let stored = try await store.response(responseId, studyKey: study.key, studyId: study.studyId) else {
            throw Unavailable(description: "The response is no longer stored.")
        }
        guard let enrollment = try await store.enrollment(stored.participantId, studyKey: study.key, studyId: study.studyId) else {
            throw Unavailable(description: "The response's participant is not enrolled in the study.")
        }
        let known = try await forwarding.questionnaireForwarded(
            studyKey: study.key, activityId: stored.activityId, version: stored.version, target: target.absoluteString)
        let questionnaire = known ? nil : stored.design.map { design in
            QuestionnaireMapping.questionnaire(
                QuestionnaireVersion(studyId: study.studyId, activityId: stored.activityId, version: stored.version, design: design),
                naming: resources.naming
            ).resource
        }
        let bundle = FHIRTransaction.forwarding(
            response: QuestionnaireResponseMapping.questionnaireResponse(stored, naming: resources.naming), of: stored,
            patient: StudyResources.patient(enrollment, naming: resources.naming), questionnaire: questionnaire, naming: resources.naming)
        var body: [UInt8] = []
        bundle.write(to: &body, sortedKeys: false)
        return Transaction(body: body, questionnaire: questionnaire == nil ? nil : (stored.activityId, stored.version))
    }
}
