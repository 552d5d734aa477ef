import Foundation
import JSONText
import StudyModels

/// A participant's signed consent as an R4 `Consent` (docs/fhir.md, Consent): one resource per
/// consent record registration keeps, its PDF as the source attachment, its data-sharing choice
/// as a nested provision.
public enum ConsentResources {
    public struct Consent: Sendable {
        /// Registration's id of the record: the resource's id.
        public var recordId: Int64
        public var participantId: Int64
        public var studyId: String
        public var version: String
        public var state: ConsentRecordState
        /// `true`, `false`, `NA` or empty (as `ConsentRecord.sharing`).
        public var sharing: String
        public var signedAt: Date
        public var endedAt: Date?
        public var pdfBytes: Int?
        public var hasPDF: Bool
        /// Recorded as completed (not pending): what it was before it ended.
        public var completed: Bool

        public init(
            recordId: Int64, participantId: Int64, studyId: String, version: String, state: ConsentRecordState, sharing: String,
            signedAt: Date, endedAt: Date?, pdfBytes: Int?, hasPDF: Bool, completed: Bool
        ) {
            self.recordId = recordId
            self.participantId = participantId
            self.studyId = studyId
            self.version = version
            self.state = state
            self.sharing = sharing
            self.signedAt = signedAt
            self.endedAt = endedAt
            self.pdfBytes = pdfBytes
            self.hasPDF = hasPDF
            self.completed = completed
        }

        public var updatedAt: Date { max(signedAt, endedAt ?? signedAt) }

        /// The consent as each version of its resource tells it, oldest first: as signed, and
        /// ended once it was.
        public var versions: [Consent] {
            guard endedAt != nil else { return [self] }
            var signed = self
            signed.state = completed ? .inForce : .pending
            signed.endedAt = nil
            return [signed, self]
        }
    }

    /// R4's Consent status for a record's state.
    public static func status(_ state: ConsentRecordState) -> String {
        switch state {
        case .pending: "proposed"
        case .inForce: "active"
        case .ended: "inactive"
        }
    }

    /// The state a Consent status searches for; nil for a status no record has.
    public static func state(status: String) -> ConsentRecordState? {
        ConsentRecordState.allCases.first { Self.status($0) == status }
    }

    /// The code of the data-sharing choice in `naming.dataSharingSystem`: sharing the
    /// participant's data with qualified researchers beyond the study's team (ResearchKit's and
    /// the MyStudies apps' consent sharing step).
    public static let broadSharingCode = "qualified-researchers"

    public static func consent(_ consent: Consent, naming: FHIRNaming) -> JSONValue {
        let research = FHIRJSON.object([
            "system": .string("http://terminology.hl7.org/CodeSystem/v3-ActReason"), "code": .string("HRESCH"),
            "display": .string("healthcare research"),
        ])
        // Asked and answered: a nested provision says whether the data may go further; `NA`
        // (the study does not ask) and no answer ever given say nothing.
        let sharing: JSONValue? =
            switch consent.sharing {
            case "true", "false":
                FHIRJSON.object([
                    "type": .string(consent.sharing == "true" ? "permit" : "deny"),
                    "code": .array([FHIRJSON.object([
                        "coding": .array([FHIRJSON.object([
                            "system": .string(naming.dataSharingSystem), "code": .string(broadSharingCode),
                            "display": .string("Sharing with qualified researchers beyond the study"),
                        ])]),
                    ])]),
                ])
            default: nil
            }
        return FHIRJSON.object([
            "resourceType": .string("Consent"),
            "id": .string(String(consent.recordId)),
            "meta": FHIRJSON.meta(versionId: consent.endedAt == nil ? "1" : "2", lastUpdated: consent.updatedAt),
            "status": .string(status(consent.state)),
            "scope": FHIRJSON.object([
                "coding": .array([FHIRJSON.object([
                    "system": .string("http://terminology.hl7.org/CodeSystem/consentscope"), "code": .string("research"),
                    "display": .string("Research"),
                ])]),
            ]),
            "category": .array([FHIRJSON.object([
                "coding": .array([FHIRJSON.object([
                    "system": .string("http://loinc.org"), "code": .string("59284-0"), "display": .string("Consent Document"),
                ])]),
            ])]),
            "patient": FHIRJSON.object(["reference": .string("Patient/\(consent.participantId)")]),
            "dateTime": .string(FHIRJSON.instant(consent.signedAt)),
            "sourceAttachment": consent.hasPDF
                ? FHIRJSON.object([
                    "contentType": .string("application/pdf"), "url": .string(naming.consentDocument(recordId: consent.recordId)),
                    "size": FHIRJSON.integer(consent.pdfBytes), "title": .string("Signed consent, version \(consent.version)"),
                    "creation": .string(FHIRJSON.instant(consent.signedAt)),
                ]) : nil,
            "policy": .array([FHIRJSON.object(["uri": .string(naming.consentPolicy(studyId: consent.studyId, version: consent.version))])]),
            "provision": FHIRJSON.object([
                "type": .string("permit"),
                "period": FHIRJSON.object([
                    "start": .string(FHIRJSON.instant(consent.signedAt)),
                    "end": consent.endedAt.map { .string(FHIRJSON.instant($0)) },
                ]),
                "purpose": .array([research]),
                "provision": FHIRJSON.array([sharing]),
            ]),
        ])
    }

    /// The signed PDF as a `Binary` resource, for a client that asks for FHIR JSON rather than
    /// the document itself.
    public static func binary(recordId: Int64, pdf: [UInt8]) -> JSONValue {
        FHIRJSON.object([
            "resourceType": .string("Binary"),
            "id": .string(FHIRId.consentDocument(recordId)),
            "contentType": .string("application/pdf"),
            "securityContext": FHIRJSON.object(["reference": .string("Consent/\(recordId)")]),
            "data": .string(Data(pdf).base64EncodedString()),
        ])
    }
}
