import FHIR
import Foundation
import JSONText
import StudyModels

/// The resources of one study as the FHIR API gives them, for its reads, searches and Bulk Data
/// exports alike (docs/fhir.md): participants and responses from this service's tables; the
/// study's versions and questionnaires from study-metadata, each design kept once read.
package struct FHIRResources: Sendable {
    package let store: FHIRStore
    package let designs: DesignSource
    package let naming: FHIRNaming

    package init(store: FHIRStore, designs: DesignSource, naming: FHIRNaming) {
        self.store = store
        self.designs = designs
        self.naming = naming
    }

    /// The study's published versions, as study-metadata keeps them.
    package func history(of study: StudyCatalog.Study) async throws -> StudyVersionHistory {
        do {
            guard let history = try await designs.versionHistory(studyId: study.studyId) else {
                throw FHIRRefusal.notFound("ResearchStudy/\(FHIRId.study(study.studyId))")
            }
            return history
        } catch let unavailable as DesignSource.Unavailable {
            throw FHIRRefusal.unavailable(unavailable.description)
        }
    }

    package func researchStudy(_ study: StudyCatalog.Study) async throws -> JSONValue {
        let history = try await history(of: study)
        return StudyResources.researchStudy(
            StudyResources.Study(
                studyId: study.studyId, name: history.versions.last?.name,
                status: StudyStatus(rawValue: study.status.rawValue) ?? .active, versions: history.versions.map(\.label),
                updatedAt: history.versions.last?.publishedAt),
            naming: naming)
    }

    package func questionnaires(of study: StudyCatalog.Study) async throws -> FHIRQuestionnaireListing {
        FHIRQuestionnaireListing(history: try await history(of: study), studyClosed: study.status == .deactivated)
    }

    /// One listed questionnaire with its design (fetched from study-metadata once, then kept).
    package func questionnaire(_ listed: FHIRQuestionnaireListing.Entry, of study: StudyCatalog.Study) async throws -> JSONValue {
        let reply: ActivityReply
        do {
            reply = try await designs.design(studyKey: study.key, studyId: study.studyId, activityId: listed.activityId, version: listed.version)
        } catch let unavailable as DesignSource.Unavailable {
            throw FHIRRefusal.unavailable(unavailable.description)
        }
        let version = QuestionnaireVersion(
            studyId: study.studyId, activityId: listed.activityId, version: listed.version, design: reply.activity,
            publishedAt: listed.publishedAt, retired: listed.retired)
        return QuestionnaireMapping.questionnaire(version, naming: naming).resource
    }

    /// A page of a Patient, ResearchSubject or QuestionnaireResponse search: the resources, the
    /// participant each concerns, and where the next page starts.
    package struct Page: Sendable {
        package var resources: [JSONValue]
        package var participants: [Int64]
        package var nextAfter: Int64?
    }

    package func page(of study: StudyCatalog.Study, _ search: FHIRSearch) async throws -> Page {
        if search.type == "QuestionnaireResponse" {
            let page = try await store.responses(studyKey: study.key, studyId: study.studyId, search: search)
            return Page(
                resources: page.resources.map { QuestionnaireResponseMapping.questionnaireResponse($0, naming: naming).resource },
                participants: page.resources.map(\.participantId), nextAfter: page.nextAfter)
        }
        let page = try await store.enrollments(studyKey: study.key, studyId: study.studyId, search: search)
        return Page(
            resources: page.resources.map { enrollment($0, as: search.type) }, participants: page.resources.map(\.participantId),
            nextAfter: page.nextAfter)
    }

    /// An enrollment as a `Patient` or a `ResearchSubject`.
    package func enrollment(_ enrollment: StudyResources.Enrollment, as type: String) -> JSONValue {
        type == "Patient" ? StudyResources.patient(enrollment, naming: naming) : StudyResources.researchSubject(enrollment, naming: naming)
    }
}
