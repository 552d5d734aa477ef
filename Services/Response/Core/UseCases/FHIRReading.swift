import FHIR
import Foundation
import JSONText
import ServiceKit
import StudyModels

/// Why a FHIR read is refused; the HTTP layer answers each as an `OperationOutcome`.
package enum FHIRRefusal: Error, Sendable, Equatable {
    /// No bearer token, or one that is not live (expired, revoked, never issued).
    case unauthenticated(String)
    /// The token's scopes do not read this resource type.
    case notInScope(String)
    /// No such resource for this token: never there, or another study's.
    case notFound(String)
    /// A search this API does not do, or does not understand, in words.
    case invalidSearch(String)
    /// A type that cannot be searched here.
    case notSearchable(String)
    /// What the answer needs cannot be read now (study-metadata did not answer); try again.
    case unavailable(String)
    /// A request this server cannot take as it is, in words.
    case invalid(String)
    /// The client has as much in progress as it may; try again later.
    case busy(String)
    /// A client registered for de-identified data asked for a participant's resource directly.
    case deidentifiedClient(String)
}

/// The FHIR API's reads for one SMART client (docs/fhir.md): each request's bearer token is
/// resolved to its grant, and only the grant's study is there to read. Every read is audited.
package struct FHIRReading: Sendable {
    package let clients: SMARTClientStore
    package let catalog: StudyCatalog
    package let resources: FHIRResources
    package let audit: AuditLog
    package var naming: FHIRNaming { resources.naming }
    private var store: FHIRStore { resources.store }

    package init(clients: SMARTClientStore, catalog: StudyCatalog, resources: FHIRResources, audit: AuditLog) {
        self.clients = clients
        self.catalog = catalog
        self.resources = resources
        self.audit = audit
    }

    /// The resource types and interactions served, as `metadata` states them (search parameters
    /// are `FHIRSearch.parameters`).
    package static let served: [(type: String, interactions: [String])] = [
        ("ResearchStudy", ["read"]), ("Patient", ["read", "vread", "history-instance", "search-type"]),
        ("ResearchSubject", ["read", "vread", "history-instance", "search-type"]),
        ("Questionnaire", ["read", "vread", "history-instance", "search-type"]), ("QuestionnaireResponse", ["read", "search-type"]),
        ("Observation", ["read", "search-type"]), ("Consent", ["read", "vread", "history-instance", "search-type"]), ("Binary", ["read"]),
    ]

    /// Each search parameter's type, as `metadata` states it.
    static let parameterTypes: [String: String] = [
        "_id": "token", "identifier": "token", "status": "token", "_lastUpdated": "date", "subject": "reference",
        "patient": "reference", "questionnaire": "reference", "url": "uri", "version": "token", "code": "token",
    ]

    /// The grant of a bearer token.
    package func grant(bearer token: String?) async throws -> SMARTClientStore.Grant {
        guard let token, !token.isEmpty, token.utf8.count <= 256 else {
            throw FHIRRefusal.unauthenticated("a bearer token from \(naming.base)/auth/token is required")
        }
        guard let grant = try await clients.grant(tokenHash: SecureToken.hash(token)) else {
            throw FHIRRefusal.unauthenticated("the bearer token is not valid: it expired, was revoked, or was never issued")
        }
        return grant
    }

    /// The types that hold a participant's data: a de-identified client gets them by export only.
    static let participantTypes: Set<String> = [
        "Patient", "ResearchSubject", "QuestionnaireResponse", "Observation", "Consent", "Binary",
    ]

    /// The grant's study, once the grant may read `type`.
    private func study(of grant: SMARTClientStore.Grant, reading type: String) async throws -> StudyCatalog.Study {
        guard grant.scopes.mayRead(type) else { throw FHIRRefusal.notInScope(type) }
        if grant.deidentified, Self.participantTypes.contains(type) { throw FHIRRefusal.deidentifiedClient(type) }
        return try await study(of: grant)
    }

    private func study(of grant: SMARTClientStore.Grant) async throws -> StudyCatalog.Study {
        guard let study = try await catalog.study(grant.studyKey) else { throw FHIRRefusal.notFound("ResearchStudy") }
        return study
    }

    private func audited(_ grant: SMARTClientStore.Grant, _ reference: String) async throws {
        try await audit.record(
            actor: "fhir-client:\(grant.clientId)", action: "fhir.read", studyId: grant.studyKey, details: ["resource": reference])
    }

    /// `Patient/{id}` or `ResearchSubject/{id}` (`type`): a participant of the grant's study, by the
    /// study's participant id.
    private func enrollment(_ type: String, id: String, bearer: String?) async throws -> JSONValue {
        try await read(type, id: id, bearer: bearer) { $0.last }
    }

    /// `{type}/{id}/_history`: every version of a resource whose versions its own course tells
    /// (`Patient`, `ResearchSubject`: enrolled, then withdrawn; `Consent`: signed, then ended),
    /// oldest first.
    package func history(_ type: String, id: String, bearer: String?) async throws -> [JSONValue] {
        try await read(type, id: id, bearer: bearer, audited: "\(type)/\(id)/_history") { $0 }
    }

    /// `{type}/{id}/_history/{n}`: its `n`th version.
    package func version(_ type: String, id: String, versionId: String, bearer: String?) async throws -> JSONValue {
        let reference = "\(type)/\(id)/_history/\(versionId)"
        // A version id is text: `01` is not version `1`.
        return try await read(type, id: id, bearer: bearer, audited: reference) { versions in
            versions.first { $0["meta"]?["versionId"]?.string?.unicodeScalars.elementsEqual(versionId.unicodeScalars) == true }
        }
    }

    /// What `pick` takes of a resource's versions, audited as read once it is found.
    private func read<T>(
        _ type: String, id: String, bearer: String?, audited reference: String? = nil, _ pick: ([JSONValue]) -> T?
    ) async throws -> T {
        let grant = try await grant(bearer: bearer)
        let study = try await study(of: grant, reading: type)
        var versions: [JSONValue] = []
        if let number = FHIRSearch.number(id) {
            switch type {
            case "Consent":
                versions = try await resources.consentVersions(number, of: study) ?? []
            default:
                let enrollment = try await store.enrollment(number, studyKey: study.key, studyId: study.studyId)
                versions = enrollment?.versions.map { resources.enrollment($0, as: type) } ?? []
            }
        }
        guard !versions.isEmpty else { throw FHIRRefusal.notFound("\(type)/\(id)") }
        guard let picked = pick(versions) else { throw FHIRRefusal.notFound(reference ?? "\(type)/\(id)") }
        try await audited(grant, reference ?? "\(type)/\(id)")
        return picked
    }

    package func patient(id: String, bearer: String?) async throws -> JSONValue {
        try await enrollment("Patient", id: id, bearer: bearer)
    }

    package func researchSubject(id: String, bearer: String?) async throws -> JSONValue {
        try await enrollment("ResearchSubject", id: id, bearer: bearer)
    }

    /// `QuestionnaireResponse/{id}`: a stored response of the grant's study.
    package func questionnaireResponse(id: String, bearer: String?) async throws -> JSONValue {
        let grant = try await grant(bearer: bearer)
        let study = try await study(of: grant, reading: "QuestionnaireResponse")
        guard let number = FHIRSearch.number(id), let response = try await store.response(number, studyKey: study.key, studyId: study.studyId)
        else { throw FHIRRefusal.notFound("QuestionnaireResponse/\(id)") }
        try await audited(grant, "QuestionnaireResponse/\(id)")
        return QuestionnaireResponseMapping.questionnaireResponse(response, naming: naming).resource
    }

    /// `Observation/{id}`: an active task's results in a stored response of the grant's study.
    package func observation(id: String, bearer: String?) async throws -> JSONValue {
        let grant = try await grant(bearer: bearer)
        let study = try await study(of: grant, reading: "Observation")
        guard let observation = try await resources.observation(id, of: study) else { throw FHIRRefusal.notFound("Observation/\(id)") }
        try await audited(grant, "Observation/\(id)")
        return observation
    }

    /// `Consent/{id}`: a consent a participant of the grant's study signed, as it is now.
    package func consent(id: String, bearer: String?) async throws -> JSONValue {
        try await read("Consent", id: id, bearer: bearer) { $0.last }
    }

    /// `Binary/consent-{id}`: the signed PDF of a consent of the grant's study, as registration
    /// keeps it (checked against the SHA-256 recorded when it was uploaded).
    package func consentDocument(id: String, bearer: String?) async throws -> (recordId: Int64, pdf: [UInt8]) {
        let grant = try await grant(bearer: bearer)
        let study = try await study(of: grant, reading: "Binary")
        // Only a record that is one of the study's Consents has its document here.
        guard let number = FHIRId.consentRecord(fromDocument: id), try await resources.consent(number, of: study) != nil,
            let pdf = try await resources.consentDocument(number, of: study)
        else { throw FHIRRefusal.notFound("Binary/\(id)") }
        try await audited(grant, "Binary/\(id)")
        return (number, pdf)
    }

    /// A search's answer: a page of resources (with what `_include` or `_revinclude` added), the
    /// total when `_summary=count` asked for it, and where the next page starts.
    package struct SearchPage: Sendable {
        package var entries: [SearchBundle.Entry]
        package var total: Int?
        package var nextAfter: Int64?
    }

    /// `GET [type]?...`: a search within the grant's study.
    package func search(type: String, query: [(name: String, value: String)], bearer: String?) async throws -> SearchPage {
        let grant = try await grant(bearer: bearer)
        guard FHIRSearch.parameters[type] != nil else { throw FHIRRefusal.notSearchable(type) }
        guard grant.scopes.maySearch(type) else { throw FHIRRefusal.notInScope(type) }
        if grant.deidentified, Self.participantTypes.contains(type) { throw FHIRRefusal.deidentifiedClient(type) }
        let study = try await study(of: grant)
        let search = try FHIRSearch.parse(type: type, query: query, studyId: study.studyId, naming: naming)
        var details = ["resource": type, "query": query.map { "\($0.name)=\($0.value)" }.joined(separator: "&")]
        if search.summaryCount {
            let total =
                type == "Questionnaire"
                ? try await resources.questionnaires(of: study).matches(search).count
                : try await resources.count(of: study, search)
            details["total"] = String(total)
            try await audit.record(actor: "fhir-client:\(grant.clientId)", action: "fhir.search", studyId: grant.studyKey, details: details)
            return SearchPage(entries: [], total: total, nextAfter: nil)
        }
        var entries: [SearchBundle.Entry] = []
        var participants: [Int64] = []
        var nextAfter: Int64?
        func entry(_ resource: JSONValue, _ mode: String) -> SearchBundle.Entry {
            let reference = "\(resource["resourceType"]?.string ?? "")/\(resource["id"]?.string ?? "")"
            return SearchBundle.Entry(resource: resource, fullUrl: "\(naming.base)/\(reference)", mode: mode)
        }
        switch type {
        case "Questionnaire":
            let matches = try await resources.questionnaires(of: study).matches(search)
            let page = matches.prefix(search.count)
            for (_, listed) in page { entries.append(entry(try await resources.questionnaire(listed, of: study), "match")) }
            nextAfter = matches.count > search.count ? page.last?.place : nil
        default:
            let page = try await resources.page(of: study, search)
            entries = page.resources.map { entry($0, "match") }
            participants = page.participants
            nextAfter = page.nextAfter
        }
        if search.include || search.revInclude {
            // QuestionnaireResponse:subject and ResearchSubject:individual add Patients; Patient's
            // revinclude adds each one's ResearchSubject: one of each per participant of the page.
            var seen = Set<Int64>()
            let distinct = participants.filter { seen.insert($0).inserted }
            let enrollments = try await store.enrollments(ids: distinct, studyKey: study.key, studyId: study.studyId)
            entries += enrollments.map { entry(resources.enrollment($0, as: type == "Patient" ? "ResearchSubject" : "Patient"), "include") }
        }
        details["matches"] = String(entries.filter { $0.mode == "match" }.count)
        try await audit.record(actor: "fhir-client:\(grant.clientId)", action: "fhir.search", studyId: grant.studyKey, details: details)
        return SearchPage(entries: entries, total: nil, nextAfter: nextAfter)
    }

    /// `Questionnaire/{id}` (and `_history/1`, its only version: a published design never changes).
    package func questionnaire(id: String, bearer: String?) async throws -> JSONValue {
        let grant = try await grant(bearer: bearer)
        let study = try await study(of: grant, reading: "Questionnaire")
        guard FHIRId.isValid(id),
            let listed = try await resources.questionnaires(of: study).entries.first(where: { $0.id.unicodeScalars.elementsEqual(id.unicodeScalars) })
        else { throw FHIRRefusal.notFound("Questionnaire/\(id)") }
        let resource = try await resources.questionnaire(listed, of: study)
        try await audited(grant, "Questionnaire/\(id)")
        return resource
    }

    /// `ResearchStudy/{id}`: the grant's own study.
    package func researchStudy(id: String, bearer: String?) async throws -> JSONValue {
        let grant = try await grant(bearer: bearer)
        guard grant.scopes.mayRead("ResearchStudy") else { throw FHIRRefusal.notInScope("ResearchStudy") }
        guard let studyId = FHIRId.studyId(from: id), let study = try await catalog.study(studyId),
            study.key.unicodeScalars.elementsEqual(grant.studyKey.unicodeScalars)
        else { throw FHIRRefusal.notFound("ResearchStudy/\(id)") }
        let resource = try await resources.researchStudy(study)
        try await audited(grant, "ResearchStudy/\(id)")
        return resource
    }

    /// `metadata`: what this server does, exactly (anyone may ask; FHIR clients read it first).
    package func capabilityStatement(tokenURL: String, now: Date = Date()) -> JSONValue {
        FHIRJSON.object([
            "resourceType": .string("CapabilityStatement"),
            "status": .string("active"),
            "date": .string(FHIRJSON.instant(now)),
            "kind": .string("instance"),
            "software": FHIRJSON.object(["name": .string("StudyStack")]),
            "implementation": FHIRJSON.object([
                "description": .string("StudyStack's FHIR API: one study per SMART Backend Services client"), "url": .string(naming.base),
            ]),
            "instantiates": .array([.string("http://hl7.org/fhir/uv/bulkdata/CapabilityStatement/bulk-data")]),
            "fhirVersion": .string("4.0.1"),
            "format": .array([.string("application/fhir+json")]),
            "rest": .array([FHIRJSON.object([
                "mode": .string("server"),
                "security": FHIRJSON.object([
                    "extension": .array([FHIRJSON.object([
                        "url": .string("http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris"),
                        "extension": .array([FHIRJSON.object(["url": .string("token"), "valueUri": .string(tokenURL)])]),
                    ])]),
                    "service": .array([FHIRJSON.object([
                        "coding": .array([FHIRJSON.object([
                            "system": .string("http://terminology.hl7.org/CodeSystem/restful-security-service"),
                            "code": .string("SMART-on-FHIR"),
                        ])]),
                    ])]),
                    "description": .string("SMART Backend Services: client_credentials with a JWT assertion (RS384 or ES384)"),
                ]),
                "resource": .array((Self.served + [("Group", [])]).map { served in
                    FHIRJSON.object([
                        "type": .string(served.type),
                        "interaction": FHIRJSON.array(served.interactions.map { FHIRJSON.object(["code": .string($0)]) }),
                        // Bulk Data's kick-offs (docs/fhir.md, Bulk Data): the study's group, and its patients.
                        "operation": served.type == "Patient" || served.type == "Group"
                            ? .array([FHIRJSON.object([
                                "name": .string("export"),
                                "definition": .string(
                                    "http://hl7.org/fhir/uv/bulkdata/OperationDefinition/\(served.type == "Group" ? "group" : "patient")-export"),
                            ])]) : nil,
                        "searchInclude": FHIRJSON.array((FHIRSearch.includes[served.type] ?? []).map(JSONValue.string)),
                        "searchRevInclude": FHIRJSON.array((FHIRSearch.revIncludes[served.type] ?? []).map(JSONValue.string)),
                        "searchParam": FHIRJSON.array((FHIRSearch.parameters[served.type] ?? []).compactMap { name in
                            Self.parameterTypes[name].map { FHIRJSON.object(["name": .string(name), "type": .string($0)]) }
                        }),
                    ])
                }),
            ])]),
        ])
    }
}
