import Foundation
import Hummingbird
import InternalContracts
import RegistrationCore
import ServiceKit
import ServiceKitHTTP
import StudyModels

/// `/internal/v1/studies/{studyId}/consent-records/...`: the response service's FHIR API reads a
/// study's consent records and their signed PDFs (signed; only the response service may call).
/// A record not yet linked to a participant's app is not there to read: the FHIR API has no
/// Patient for it.
package struct InternalConsentRecordRoutes {
    package let consents: ConsentStore

    package init(consents: ConsentStore) {
        self.consents = consents
    }

    package func add(to group: RouterGroup<ServiceRequestContext>) {
        group.on(InternalCalls.consentRecords, use: search)
        group.on(InternalCalls.consentPDF, use: pdf)
    }

    @Sendable package func search(_ call: InternalRequest<ConsentRecordQuery>) async throws -> ConsentRecordPage {
        try await consents.records(studyId: try call.parameter("studyId"), query: call.body)
    }

    @Sendable package func pdf(_ call: InternalRequest<NoContent>) async throws -> OpaqueBody {
        let text = try call.parameter("consentId")
        guard text.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }), let consentId = Int64(text),
            let record = try await consents.linkedRecord(consentId: consentId, studyId: try call.parameter("studyId")),
            let pdf = try await consents.pdf(of: record)
        else { throw APIError.notFound("the study has no such consent record linked to a participant, or it has no PDF") }
        return OpaqueBody(Array(pdf))
    }
}
