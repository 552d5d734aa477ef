import FHIR
import Foundation
import JSONText
import ServiceKit
import StudyModels

/// The resources of one study as the FHIR API gives them, for its reads, searches and Bulk Data
/// exports alike (docs/fhir.md): participants and responses from this service's tables; the
/// study's versions and questionnaires from study-metadata, each design kept once read; the
/// consents participants signed from registration.
package struct FHIRResources: Sendable {
    package let store: FHIRStore
    package let designs: DesignSource
    package let consents: ConsentRecordSource
    package let naming: FHIRNaming

    package init(store: FHIRStore, designs: DesignSource, consents: ConsentRecordSource, naming: FHIRNaming) {
        self.store = store
        self.designs = designs
        self.consents = consents
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

    /// A page of a Patient, ResearchSubject, QuestionnaireResponse or Consent search: the resources, the
    /// participant each concerns, and where the next page starts.
    package struct Page: Sendable {
        package var resources: [JSONValue]
        package var participants: [Int64]
        package var nextAfter: Int64?
    }

    /// A page of a search, each activity version's design prepared once for it.
    package func page(of study: StudyCatalog.Study, _ search: FHIRSearch) async throws -> Page {
        var mappers = QuestionnaireResponseMapping.Mappers(naming: naming)
        return page(try await rows(of: study, search), type: search.type, mappers: &mappers)
    }

    /// The rows of a page as the store reads them, before they are resources: an export reads the
    /// next page while it writes this one.
    package enum Rows: Sendable {
        case enrollments(FHIRStore.Page<StudyResources.Enrollment>)
        case responses(FHIRStore.Page<StoredResponse>)
        /// Responses whose answers an export parses where it writes them.
        case unparsedResponses(FHIRStore.Page<FHIRStore.UnparsedResponse>)
        case consents(FHIRStore.Page<ConsentResources.Consent>)
        /// Responses to task activities, and which of their Observations the search keeps.
        case observations(FHIRStore.Page<StoredResponse>, code: TaskType?, ids: [String]?)

        package var nextAfter: Int64? {
            switch self {
            case .enrollments(let page): page.nextAfter
            case .responses(let page): page.nextAfter
            case .unparsedResponses(let page): page.nextAfter
            case .consents(let page): page.nextAfter
            case .observations(let page, _, _): page.nextAfter
            }
        }
    }

    /// With `answersUnparsed`, responses come as `.unparsedResponses`.
    package func rows(of study: StudyCatalog.Study, _ search: FHIRSearch, answersUnparsed: Bool = false) async throws -> Rows {
        switch search.type {
        case "QuestionnaireResponse" where answersUnparsed:
            .unparsedResponses(try await store.unparsedResponses(studyKey: study.key, studyId: study.studyId, search: search))
        case "QuestionnaireResponse":
            .responses(try await store.responses(studyKey: study.key, studyId: study.studyId, search: search))
        case "Consent":
            .consents(try await fromRegistration { try await consents.consents(studyKey: study.key, studyId: study.studyId, search: search) })
        case "Observation":
            .observations(
                try await store.taskResponses(studyKey: study.key, studyId: study.studyId, search: search), code: search.code,
                ids: search.textIds)
        default:
            .enrollments(try await store.enrollments(studyKey: study.key, studyId: study.studyId, search: search))
        }
    }

    /// How many resources a search of a participant's type finds (`_summary=count`).
    package func count(of study: StudyCatalog.Study, _ search: FHIRSearch) async throws -> Int {
        switch search.type {
        case "Consent":
            return try await fromRegistration { try await consents.count(studyKey: study.key, studyId: study.studyId, search: search) }
        case "Observation" where search.textIds != nil:
            // Named Observations (at most `FHIRSearch.maxCount`): those of their responses kept.
            var all = search
            all.count = FHIRSearch.maxCount
            var mappers = QuestionnaireResponseMapping.Mappers(naming: naming)
            return page(try await rows(of: study, all), type: "Observation", mappers: &mappers).resources.count
        case "Observation":
            return try await store.countTaskObservations(studyKey: study.key, search: search)
        default:
            return try await store.count(studyKey: study.key, search: search)
        }
    }

    /// `Observation/{id}`: one task result of a response of the study.
    package func observation(_ id: String, of study: StudyCatalog.Study) async throws -> JSONValue? {
        guard let (responseId, _) = TaskObservations.parse(id: id),
            let response = try await store.response(responseId, studyKey: study.key, studyId: study.studyId)
        else { return nil }
        return TaskObservations.observations(response, naming: naming).first { $0["id"]?.string?.unicodeScalars.elementsEqual(id.unicodeScalars) == true }
    }

    /// Consent `id` of the study, each of its versions oldest first (nil when it has none).
    package func consentVersions(_ id: Int64, of study: StudyCatalog.Study) async throws -> [JSONValue]? {
        try await fromRegistration { try await consents.consent(id, studyKey: study.key, studyId: study.studyId) }
            .map { $0.versions.map { ConsentResources.consent($0, naming: naming) } }
    }

    /// Consent `id` of the study, as it is now.
    package func consent(_ id: Int64, of study: StudyCatalog.Study) async throws -> JSONValue? {
        try await consentVersions(id, of: study)?.last
    }

    /// How many signed PDFs (each up to registration's limit, 5 MiB by default) are read at once
    /// in one process, and how many reads may wait: many clients reading at once cannot add
    /// their documents up past the process's memory.
    static let documentReads = IntakeLimit(maxRunning: 4, maxWaiting: 16)

    /// The signed PDF of consent `id` of the study; `busy` when as many are being read as may be.
    package func consentDocument(_ id: Int64, of study: StudyCatalog.Study) async throws -> [UInt8]? {
        do {
            return try await Self.documentReads.run {
                try await fromRegistration { try await consents.pdf(id, studyId: study.studyId) }
            }
        } catch let busy as IntakeLimit.Busy {
            throw FHIRRefusal.busy("\(busy)")
        }
    }

    /// What registration answers, or the FHIR refusal of a registration that does not.
    private func fromRegistration<T>(_ read: () async throws -> T) async throws -> T {
        do {
            return try await read()
        } catch let unavailable as ConsentRecordSource.Unavailable {
            throw FHIRRefusal.unavailable(unavailable.description)
        }
    }

    /// The resources of a page's rows, of `type` (an enrollment is a Patient or a ResearchSubject).
    package func page(_ rows: Rows, type: String, mappers: inout QuestionnaireResponseMapping.Mappers) -> Page {
        switch rows {
        case .responses(let page):
            Page(
                resources: page.resources.map { mappers.map($0).resource }, participants: page.resources.map(\.participantId),
                nextAfter: page.nextAfter)
        case .unparsedResponses(let page):
            self.page(.responses(FHIRStore.Page(resources: page.resources.map { $0.parsed() }, nextAfter: page.nextAfter)), type: type, mappers: &mappers)
        case .enrollments(let page):
            Page(
                resources: page.resources.map { enrollment($0, as: type) }, participants: page.resources.map(\.participantId),
                nextAfter: page.nextAfter)
        case .consents(let page):
            Page(
                resources: page.resources.map { ConsentResources.consent($0, naming: naming) },
                participants: page.resources.map(\.participantId), nextAfter: page.nextAfter)
        case .observations(let page, let code, let ids):
            observations(page, code: code, ids: ids)
        }
    }

    /// The Observations of a page of task responses, each with its participant: those of the
    /// searched task, and of the ids named, when the search says.
    private func observations(_ page: FHIRStore.Page<StoredResponse>, code: TaskType?, ids: [String]?) -> Page {
        let named = ids.map { Set($0.map { ScalarKey($0) }) }
        var resources: [JSONValue] = []
        var participants: [Int64] = []
        for response in page.resources {
            for observation in TaskObservations.observations(response, naming: naming) {
                if let code, observation["code"]?["coding"]?.array?.first?["code"]?.string != code.rawValue { continue }
                if let named, !named.contains(ScalarKey(observation["id"]?.string ?? "")) { continue }
                resources.append(observation)
                participants.append(response.participantId)
            }
        }
        return Page(resources: resources, participants: participants, nextAfter: page.nextAfter)
    }

    /// An enrollment as a `Patient` or a `ResearchSubject`.
    package func enrollment(_ enrollment: StudyResources.Enrollment, as type: String) -> JSONValue {
        type == "Patient" ? StudyResources.patient(enrollment, naming: naming) : StudyResources.researchSubject(enrollment, naming: naming)
    }
}
