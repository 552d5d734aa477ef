import Foundation
import JSONText
import StudyModels

/// The study, its participants and their enrollments as FHIR resources: `ResearchStudy`,
/// `Patient` (pseudonymous: the study's participant id and nothing else) and `ResearchSubject`.
public enum StudyResources {
    public struct Study: Sendable {
        public var studyId: String
        public var name: String?
        public var status: StudyStatus
        /// The study's published version labels, oldest first.
        public var versions: [String]
        public var updatedAt: Date?

        public init(studyId: String, name: String?, status: StudyStatus, versions: [String], updatedAt: Date?) {
            self.studyId = studyId
            self.name = name
            self.status = status
            self.versions = versions
            self.updatedAt = updatedAt
        }
    }

    /// One enrollment: the participant's id in the study and its course.
    public struct Enrollment: Sendable {
        public var participantId: Int64
        public var studyId: String
        public var withdrawn: Bool
        public var enrolledAt: Date
        public var withdrawnAt: Date?

        public init(participantId: Int64, studyId: String, withdrawn: Bool, enrolledAt: Date, withdrawnAt: Date?) {
            self.participantId = participantId
            self.studyId = studyId
            self.withdrawn = withdrawn
            self.enrolledAt = enrolledAt
            self.withdrawnAt = withdrawnAt
        }

        /// The latest change of the enrollment, its resources' `lastUpdated`.
        public var updatedAt: Date { withdrawnAt ?? enrolledAt }

        /// The enrollment as each version of its resources tells it, oldest first: enrolled, and
        /// withdrawn once it was.
        public var versions: [Enrollment] {
            guard withdrawn else { return [self] }
            var enrolled = self
            enrolled.withdrawn = false
            enrolled.withdrawnAt = nil
            return [enrolled, self]
        }
    }

    /// R4's ResearchStudy status for a study's lifecycle status.
    public static func researchStudyStatus(_ status: StudyStatus) -> String {
        switch status {
        case .preLaunch, .testing: "in-review"
        case .upcoming: "approved"
        case .active: "active"
        case .paused: "temporarily-closed-to-accrual-and-intervention"
        case .deactivated: "completed"
        }
    }

    public static func researchStudy(_ study: Study, naming: FHIRNaming) -> JSONValue {
        FHIRJSON.object([
            "resourceType": .string("ResearchStudy"),
            "id": .string(FHIRId.study(study.studyId)),
            // No versionId: study-metadata keeps each version's document but not the study's
            // lifecycle status at the time, so an earlier version could not be read as it was.
            "meta": FHIRJSON.meta(versionId: nil, lastUpdated: study.updatedAt),
            // Each published version of the study, oldest first.
            "extension": FHIRJSON.array(study.versions.map {
                FHIRExtension.make("\(naming.base)/StructureDefinition/study-version", "valueString", .string($0))
            }),
            "identifier": .array([FHIRJSON.object([
                "use": .string("official"), "system": .string(naming.studySystem), "value": .string(study.studyId),
            ])]),
            "title": FHIRJSON.string(study.name),
            "status": .string(researchStudyStatus(study.status)),
        ])
    }

    public static func patient(_ enrollment: Enrollment, naming: FHIRNaming) -> JSONValue {
        FHIRJSON.object([
            "resourceType": .string("Patient"),
            "id": .string(String(enrollment.participantId)),
            "meta": FHIRJSON.meta(versionId: enrollment.withdrawn ? "2" : "1", lastUpdated: enrollment.updatedAt),
            "identifier": .array([FHIRJSON.object([
                "use": .string("official"), "system": .string(naming.participantSystem(studyId: enrollment.studyId)),
                "value": .string(String(enrollment.participantId)),
            ])]),
            "active": .bool(!enrollment.withdrawn),
        ])
    }

    public static func researchSubject(_ enrollment: Enrollment, naming: FHIRNaming) -> JSONValue {
        FHIRJSON.object([
            "resourceType": .string("ResearchSubject"),
            "id": .string(String(enrollment.participantId)),
            "meta": FHIRJSON.meta(versionId: enrollment.withdrawn ? "2" : "1", lastUpdated: enrollment.updatedAt),
            "identifier": .array([FHIRJSON.object([
                "system": .string(naming.participantSystem(studyId: enrollment.studyId)),
                "value": .string(String(enrollment.participantId)),
            ])]),
            "status": .string(enrollment.withdrawn ? "withdrawn" : "on-study"),
            "period": FHIRJSON.object([
                "start": .string(FHIRJSON.instant(enrollment.enrolledAt)),
                "end": enrollment.withdrawnAt.map { .string(FHIRJSON.instant($0)) },
            ]),
            "study": FHIRJSON.object(["reference": .string("ResearchStudy/\(FHIRId.study(enrollment.studyId))")]),
            "individual": FHIRJSON.object(["reference": .string("Patient/\(enrollment.participantId)")]),
        ])
    }
}

/// `OperationOutcome`: how the FHIR API says what went wrong.
public enum OperationOutcome {
    /// R4's issue-type codes the API uses.
    public enum Code: String, Sendable {
        case invalid, security, login, forbidden, notFound = "not-found", notSupported = "not-supported", tooCostly = "too-costly"
        case throttled, processing, exception, deleted, conflict, transient
    }

    public static func make(_ code: Code, _ diagnostics: String, severity: String = "error", expression: String? = nil) -> JSONValue {
        FHIRJSON.object([
            "resourceType": .string("OperationOutcome"),
            "issue": .array([FHIRJSON.object([
                "severity": .string(severity), "code": .string(code.rawValue), "diagnostics": .string(diagnostics),
                "expression": expression.map { .array([.string($0)]) },
            ])]),
        ])
    }
}

/// `Bundle` of type `searchset`.
public enum SearchBundle {
    public struct Entry: Sendable {
        public var resource: JSONValue
        public var fullUrl: String
        /// `match` for what was searched for, `include` for what `_include` and `_revinclude` added.
        public var mode: String

        public init(resource: JSONValue, fullUrl: String, mode: String) {
            self.resource = resource
            self.fullUrl = fullUrl
            self.mode = mode
        }
    }

    /// `total` is given only when it was counted; `next` only when there are more.
    public static func make(total: Int?, selfURL: String, nextURL: String?, entries: [Entry], now: Date = Date()) -> JSONValue {
        FHIRJSON.object([
            "resourceType": .string("Bundle"),
            "meta": FHIRJSON.object(["lastUpdated": .string(FHIRJSON.instant(now))]),
            "type": .string("searchset"),
            "total": FHIRJSON.integer(total),
            "link": FHIRJSON.array([
                FHIRJSON.object(["relation": .string("self"), "url": .string(selfURL)]),
                nextURL.map { FHIRJSON.object(["relation": .string("next"), "url": .string($0)]) },
            ]),
            "entry": FHIRJSON.array(entries.map { entry in
                FHIRJSON.object([
                    "fullUrl": .string(entry.fullUrl), "resource": entry.resource,
                    "search": FHIRJSON.object(["mode": .string(entry.mode)]),
                ])
            }),
        ])
    }

    /// A `history` Bundle of a resource's versions, given oldest first and listed newest first
    /// as FHIR's history is: the first was created, each later one an update. (A published
    /// questionnaire version has one; an enrollment a second once withdrawn; a consent a second
    /// once it ended.)
    public static func history(of versions: [JSONValue], fullUrl: String, selfURL: String, now: Date = Date()) -> JSONValue {
        let type = versions.first?["resourceType"]?.string ?? ""
        let id = versions.first?["id"]?.string ?? ""
        return FHIRJSON.object([
            "resourceType": .string("Bundle"),
            "meta": FHIRJSON.object(["lastUpdated": .string(FHIRJSON.instant(now))]),
            "type": .string("history"),
            "total": FHIRJSON.integer(versions.count),
            "link": .array([FHIRJSON.object(["relation": .string("self"), "url": .string(selfURL)])]),
            "entry": .array(versions.enumerated().reversed().map { index, resource in
                FHIRJSON.object([
                    "fullUrl": .string(fullUrl), "resource": resource,
                    "request": FHIRJSON.object([
                        "method": .string(index == 0 ? "POST" : "PUT"), "url": .string(index == 0 ? type : "\(type)/\(id)"),
                    ]),
                    "response": FHIRJSON.object([
                        "status": .string(index == 0 ? "201 Created" : "200 OK"), "lastModified": resource["meta"]?["lastUpdated"],
                    ]),
                ])
            }),
        ])
    }
}
