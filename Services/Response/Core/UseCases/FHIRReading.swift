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
}

/// The FHIR API's reads for one SMART client (docs/fhir.md): each request's bearer token is
/// resolved to its grant, and only the grant's study is there to read. Every read is audited.
package struct FHIRReading: Sendable {
    package let clients: SMARTClientStore
    package let catalog: StudyCatalog
    package let audit: AuditLog
    package let naming: FHIRNaming

    package init(clients: SMARTClientStore, catalog: StudyCatalog, audit: AuditLog, naming: FHIRNaming) {
        self.clients = clients
        self.catalog = catalog
        self.audit = audit
        self.naming = naming
    }

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

    /// `ResearchStudy/{id}`: the grant's own study.
    package func researchStudy(id: String, bearer: String?) async throws -> JSONValue {
        let grant = try await grant(bearer: bearer)
        guard grant.scopes.mayRead("ResearchStudy") else { throw FHIRRefusal.notInScope("ResearchStudy") }
        guard let studyId = FHIRId.studyId(from: id), let study = try await catalog.study(studyId),
            study.key.unicodeScalars.elementsEqual(grant.studyKey.unicodeScalars)
        else { throw FHIRRefusal.notFound("ResearchStudy/\(id)") }
        try await audit.record(
            actor: "fhir-client:\(grant.clientId)", action: "fhir.read", studyId: grant.studyKey,
            details: ["resource": "ResearchStudy/\(id)"])
        return StudyResources.researchStudy(
            StudyResources.Study(
                studyId: study.studyId, name: nil, status: StudyStatus(rawValue: study.status.rawValue) ?? .active,
                versions: [], updatedAt: nil),
            naming: naming)
    }
}
